import Synchronization

/// The messages received and not yet taken, at most `capacity`. With it full, the connection
/// stops reading (`put` waits for room), so the rest wait in TCP and at the broker rather
/// than being dropped: a command after a burst (the OFF after 150 ONs) is always obeyed, in
/// its order. One consumer iterates it.
public final class MQTTMessages: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage

    private struct State {
        var buffer: [MQTTMessage] = []
        var start = 0
        var consumer: CheckedContinuation<MQTTMessage?, Never>?
        /// Producers waiting for room, each resumed with whether it may put (false: finished).
        var producers: [(id: UInt64, waiting: CheckedContinuation<Bool, Never>)] = []
        var nextProducer: UInt64 = 0
        var finished = false
        var count: Int { buffer.count - start }

        mutating func take() -> MQTTMessage {
            let message = buffer[start]
            start += 1
            if start > 64, start * 2 > buffer.count {
                buffer.removeFirst(start)
                start = 0
            }
            return message
        }
    }

    public let capacity: Int
    private let state = Mutex(State())

    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Hands `message` to the consumer, waiting while `capacity` are waiting to be taken.
    /// Returns false, without keeping it, once the sequence is finished or the caller is
    /// cancelled while it waits.
    @discardableResult
    public func put(_ message: MQTTMessage) async -> Bool {
        while true {
            enum Step { case delivered(CheckedContinuation<MQTTMessage?, Never>?), full, finished }
            let step: Step = state.withLock { state in
                if state.finished { return .finished }
                if let consumer = state.consumer {
                    state.consumer = nil
                    return .delivered(consumer)
                }
                guard state.count < capacity else { return .full }
                state.buffer.append(message)
                return .delivered(nil)
            }
            switch step {
            case .finished:
                return false
            case .delivered(let consumer):
                consumer?.resume(returning: message)
                return true
            case .full:
                let id = state.withLock { state in
                    state.nextProducer += 1
                    return state.nextProducer
                }
                let room = await withTaskCancellationHandler {
                    await withCheckedContinuation { (waiting: CheckedContinuation<Bool, Never>) in
                        let resumeNow: Bool? = state.withLock { state in
                            if state.finished || Task.isCancelled { return false }
                            if state.count < capacity { return true }
                            state.producers.append((id, waiting))
                            return nil
                        }
                        if let resumeNow { waiting.resume(returning: resumeNow) }
                    }
                } onCancel: {
                    let waiting = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                        guard let index = state.producers.firstIndex(where: { $0.id == id }) else { return nil }
                        return state.producers.remove(at: index).waiting
                    }
                    waiting?.resume(returning: false)
                }
                if !room { return false }
            }
        }
    }

    /// Whether `capacity` messages are waiting: the connection is not being read.
    public var isFull: Bool { state.withLock { $0.count >= capacity } }
    /// How many are waiting to be taken.
    public var count: Int { state.withLock { $0.count } }

    /// Ends the sequence: the consumer's iteration ends once it has taken what is waiting,
    /// and producers still waiting are let go.
    public func finish() {
        let (consumer, producers) = state.withLock { state in
            state.finished = true
            let consumer = state.count == 0 ? state.consumer : nil
            if consumer != nil { state.consumer = nil }
            defer { state.producers = [] }
            return (consumer, state.producers.map(\.waiting))
        }
        consumer?.resume(returning: nil)
        producers.forEach { $0.resume(returning: false) }
    }

    private func next() async -> MQTTMessage? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (consumer: CheckedContinuation<MQTTMessage?, Never>) in
                enum Step { case message(MQTTMessage, CheckedContinuation<Bool, Never>?), end, wait }
                let step: Step = state.withLock { state in
                    if state.count > 0 {
                        let message = state.take()
                        let producer = state.producers.isEmpty ? nil : state.producers.removeFirst().waiting
                        return .message(message, producer)
                    }
                    if state.finished || Task.isCancelled { return .end }
                    state.consumer = consumer
                    return .wait
                }
                switch step {
                case .message(let message, let producer):
                    consumer.resume(returning: message)
                    producer?.resume(returning: true)
                case .end:
                    consumer.resume(returning: nil)
                case .wait:
                    break
                }
            }
        } onCancel: {
            let consumer = state.withLock { state in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume(returning: nil)
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let messages: MQTTMessages
        public mutating func next() async -> MQTTMessage? { await messages.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(messages: self) }
}
