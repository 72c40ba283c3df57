import Foundation

/// Work started on a thread of its own at once, for a test that plays a real-time part (a
/// reader with its own clock, a fake server). A task, even one that would only hand the work
/// to a thread, must first get a turn on the test process's cooperative pool: two threads,
/// which the other tests running meanwhile can keep busy for seconds.
public final class ThreadTask<Value: Sendable>: Sendable {
    private let result: AsyncStream<Value>

    public init(_ work: @escaping @Sendable () -> Value) {
        let (result, continuation) = AsyncStream.makeStream(of: Value.self)
        self.result = result
        Thread {
            continuation.yield(work())
            continuation.finish()
        }.start()
    }

    /// The work's result, once it is done. A test cancelled meanwhile (over its time limit)
    /// gets `CancellationError` at once, and fails alone: the work's thread runs on to its end.
    public var value: Value {
        get async throws(CancellationError) {
            var results = result.makeAsyncIterator()
            // The thread yields its result before it finishes the stream, so nil means the
            // waiting task was cancelled.
            guard let value = await results.next() else { throw CancellationError() }
            return value
        }
    }
}
