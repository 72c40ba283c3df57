/// A process's log as it arrives; tests wait for a line instead of sleeping.
public actor LogLines {
    public init() {}

    public private(set) var lines: [String] = []
    private var finished = false
    private var waiters: [(condition: @Sendable ([String]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    public func append(_ line: String) {
        lines.append(line)
        let ready = waiters.filter { $0.condition(lines) }
        waiters.removeAll { $0.condition(lines) }
        ready.forEach { $0.continuation.resume() }
    }

    public func finish() {
        finished = true
        waiters.forEach { $0.continuation.resume() }
        waiters = []
    }

    /// Returns true once a line containing `text` has arrived, false if the log ended first
    /// or the test was cancelled (its time limit ran out).
    @discardableResult
    public func waitFor(_ text: String) async -> Bool {
        await waitUntil { $0.contains { $0.contains(text) } }
    }

    /// Returns true once the lines so far satisfy `condition`; false as `waitFor`.
    @discardableResult
    public func waitUntil(_ condition: @escaping @Sendable ([String]) -> Bool) async -> Bool {
        if condition(lines) { return true }
        if finished || Task.isCancelled { return false }
        await withTaskCancellationHandler {
            await withCheckedContinuation { waiters.append((condition, $0)) }
        } onCancel: {
            Task { await self.finish() }
        }
        return condition(lines)
    }
}
