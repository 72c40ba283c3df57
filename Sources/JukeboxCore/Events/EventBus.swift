import Synchronization

/// Fans events out to subscribers. Publishing never waits: each subscriber has its own
/// bounded buffer, so a client that stops reading loses its oldest events instead of
/// slowing the player or other clients.
public final class EventBus: Sendable {
    private struct State {
        var nextID = 0
        var subscribers: [Int: AsyncStream<JukeboxEvent>.Continuation] = [:]
    }

    private let state = Mutex(State())
    private let bufferLimit: Int

    public init(bufferLimit: Int = 1000) {
        self.bufferLimit = bufferLimit
    }

    public func publish(_ event: JukeboxEvent) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(event) }
    }

    /// A stream of every event published from now on; it ends when the consumer stops iterating.
    public func subscribe() -> AsyncStream<JukeboxEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: JukeboxEvent.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        let id = state.withLock { state in
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }
}
