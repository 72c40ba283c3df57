import ServiceLifecycle

/// Work that may never end (a device's open stuck in a driver, or in a FIFO nobody reads),
/// waited for only so long: the caller has its answer at the limit, at its own cancellation or
/// when a stop begins, whichever comes first, while the work goes on in a task of its own
/// until it ends. Whoever starts it keeps what the work holds (a device, a thread) accounted
/// for until then (`Jukebox.soundTest` keeps its one slot).
enum AbandonableCall {
    enum Outcome<Value: Sendable>: Sendable {
        case finished(Value)
        /// The limit came first.
        case timedOut
        /// A stop began (the service group's graceful shutdown).
        case stopping
        /// The caller's task was cancelled.
        case cancelled
    }

    /// Starts `work` and returns the first of the outcomes above. `waitForLimit` returns at the
    /// limit (it throws when cancelled, once another outcome came first).
    static func run<Value: Sendable>(
        waitForLimit: @escaping @Sendable () async throws -> Void, work: @escaping @Sendable () async -> Value
    ) async -> Outcome<Value> {
        let (outcomes, tell) = AsyncStream.makeStream(of: Outcome<Value>.self, bufferingPolicy: .bufferingOldest(1))
        // Unstructured, so that the answer never waits for the work: a task group would.
        // Each inherits the caller's task locals, among them the graceful-shutdown signal.
        let working = Task { tell.yield(.finished(await work())) }
        let limit = Task {
            guard (try? await waitForLimit()) != nil else { return }
            tell.yield(.timedOut)
        }
        let stop = Task {
            guard (try? await gracefulShutdown()) != nil else { return }
            tell.yield(.stopping)
        }
        let first = await withTaskCancellationHandler {
            var iterator = outcomes.makeAsyncIterator()
            return await iterator.next() ?? .cancelled
        } onCancel: {
            tell.yield(.cancelled)
        }
        tell.finish()
        limit.cancel()
        stop.cancel()
        _ = working
        return first
    }
}
