import Synchronization

/// How many raw bytes (an upload's file) the line decoder passes on before it reads lines
/// again. The server sets it when it accepts an `upload` request and before it answers, so
/// the client, which sends the file only after the answer, never has its bytes read as lines.
final class PendingUploadBytes: Sendable {
    private let remaining = Atomic<Int>(0)

    /// The next `count` bytes are the file.
    func expect(_ count: Int) { remaining.store(count, ordering: .sequentiallyConsistent) }

    var pending: Int { remaining.load(ordering: .sequentiallyConsistent) }

    /// Up to `available` bytes to pass on as raw now.
    func take(upTo available: Int) -> Int {
        let count = min(available, pending)
        if count > 0 { remaining.subtract(count, ordering: .sequentiallyConsistent) }
        return count
    }
}
