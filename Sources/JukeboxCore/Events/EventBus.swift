import DequeModule
import Synchronization

/// Fans events out to subscribers (the core calls it `events`, and so does the state writer):
/// once the state is saved to a file (`releaseOnlyWhatIsSaved`), an event that describes a change of the saved state reaches
/// subscribers only when a write that holds the change is on disk (`release(through:)`). So a
/// socket subscriber, the event stream of the HTTP API and MQTT's state topics never hear of a
/// change that a crash could still undo. Events about what is not saved (the device, the next
/// pick, a reload) go out at once.
///
/// Publishing never waits: each subscriber has its own bounded buffer, so a client that stops
/// reading loses its oldest events instead of slowing the player or other clients.
public final class EventBus: Sendable {
    private struct State {
        var nextID = 0
        /// Told of a saved change once it is on disk.
        var subscribers: [Int: AsyncStream<JukeboxEvent>.Continuation] = [:]
        /// The core's own watchers (the saving loop, the idle hook): told at once.
        var watchers: [Int: AsyncStream<JukeboxEvent>.Continuation] = [:]
        /// How many events have been published.
        var published: UInt64 = 0
        var waitingForSaves = false
        /// Saved-state events waiting for their write, numbered in publishing order.
        var unsaved = Deque<(number: UInt64, event: JukeboxEvent)>()
    }

    private let state = Mutex(State())
    private let bufferLimit: Int

    public init(bufferLimit: Int = 1000) {
        self.bufferLimit = bufferLimit
    }

    /// From now on, saved-state events wait for `release(through:)`. Called once, by the owner
    /// of the state file, before anything is published.
    public func releaseOnlyWhatIsSaved() { state.withLock { $0.waitingForSaves = true } }

    public func publish(_ event: JukeboxEvent) {
        let (watchers, subscribers) = state.withLock { state in
            state.published += 1
            let watchers = Array(state.watchers.values)
            guard state.waitingForSaves, event.describesSavedState else { return (watchers, Array(state.subscribers.values)) }
            state.unsaved.append((state.published, event))
            // Bounded even if writes fail for a long time: the oldest are dropped, as a slow
            // subscriber's are.
            if state.unsaved.count > bufferLimit { state.unsaved.removeFirst() }
            return (watchers, [])
        }
        for watcher in watchers { watcher.yield(event) }
        for subscriber in subscribers { subscriber.yield(event) }
    }

    /// How many events have been published so far. A write that reads the state after this
    /// holds every change those events describe (each is published right after its change,
    /// by the change's owner), so once it is on disk they may go out.
    public func mark() -> UInt64 { state.withLock { $0.published } }

    /// Sends the unsaved events numbered up to `mark`, in order: their changes are on disk.
    public func release(through mark: UInt64) {
        let (due, subscribers) = state.withLock { state in
            var due: [JukeboxEvent] = []
            while let first = state.unsaved.first, first.number <= mark {
                due.append(first.event)
                state.unsaved.removeFirst()
            }
            return (due, due.isEmpty ? [] : Array(state.subscribers.values))
        }
        for event in due {
            for subscriber in subscribers { subscriber.yield(event) }
        }
    }

    /// A stream of every event published from now on, each saved change once it is on disk;
    /// it ends when the consumer stops iterating. What front ends follow.
    public func subscribe() -> AsyncStream<JukeboxEvent> { add(watcher: false) }

    /// A stream of every event as it is published, before it is saved: for the core itself,
    /// which saves what the daemon changes by itself and runs the idle hook.
    func watch() -> AsyncStream<JukeboxEvent> { add(watcher: true) }

    private func add(watcher: Bool) -> AsyncStream<JukeboxEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: JukeboxEvent.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        let id = state.withLock { state in
            state.nextID += 1
            if watcher { state.watchers[state.nextID] = continuation } else { state.subscribers[state.nextID] = continuation }
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.watchers[id] = nil
                state.subscribers[id] = nil
            }
        }
        return stream
    }

    /// How many follow the events now: the socket's subscribers, the page's event streams,
    /// the MQTT front end.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }
}
