import Logging
import Synchronization

/// Log lines kept for assertions; tests wait for one instead of sleeping.
public final class LogCollector: LogHandler, @unchecked Sendable {
    // @unchecked: only `metadata` and `logLevel` are unguarded, and the tests never change them.
    public init() {}

    private struct Waiter {
        var id: Int
        var text: String
        var continuation: CheckedContinuation<Void, Never>
    }

    private let state = Mutex<(lines: [String], waiters: [Waiter], nextID: Int)>(([], [], 0))
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let text = "\(event.message)"
        let ready = state.withLock { state in
            state.lines.append(text)
            let ready = state.waiters.filter { text.contains($0.text) }
            state.waiters.removeAll { text.contains($0.text) }
            return ready
        }
        ready.forEach { $0.continuation.resume() }
    }

    public var lines: [String] { state.withLock { $0.lines } }

    public func contains(_ text: String) -> Bool { state.withLock { $0.lines.contains { $0.contains(text) } } }

    /// Returns once a line containing `text` has been logged, or once the task is cancelled
    /// (a test past its time limit ends, failing, rather than waiting for ever).
    public func waitFor(_ text: String) async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    if Task.isCancelled || state.lines.contains(where: { $0.contains(text) }) { return true }
                    state.waiters.append(Waiter(id: id, text: text, continuation: continuation))
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume()
        }
    }
}

extension Logger {
    /// Tests assert on behaviour, not on log text; keep their output clean.
    public static let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
}
