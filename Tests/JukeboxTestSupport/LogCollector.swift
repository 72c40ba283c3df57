import Logging
import Synchronization

/// Log lines kept for assertions; tests wait for one instead of sleeping.
public final class LogCollector: LogHandler, @unchecked Sendable {
    // @unchecked: only `metadata` and `logLevel` are unguarded, and the tests never change them.
    public init() {}

    private let state = Mutex<(lines: [String], waiters: [(String, CheckedContinuation<Void, Never>)])>(([], []))
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
            let ready = state.waiters.filter { text.contains($0.0) }
            state.waiters.removeAll { text.contains($0.0) }
            return ready
        }
        ready.forEach { $0.1.resume() }
    }

    public var lines: [String] { state.withLock { $0.lines } }

    public func contains(_ text: String) -> Bool { state.withLock { $0.lines.contains { $0.contains(text) } } }

    public func waitFor(_ text: String) async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if state.lines.contains(where: { $0.contains(text) }) { return true }
                state.waiters.append((text, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}
