import Synchronization

/// A sleep on the elapsed clock that can be cut short (`wake()`), so a loop that sleeps until
/// its next moment (the scheduler, the timetable, quiet hours, the volume schedule) looks again
/// at once after a reload or a change by hand. Cancelling the task that sleeps (shutdown)
/// throws, as any sleep does.
final class WakeableSleep: Sendable {
    private let current = Mutex<Task<Void, any Error>?>(nil)

    /// Sleeps until `deadline` on `clock`. Returns true once it is reached, false if woken
    /// first; throws if the task is cancelled.
    @discardableResult
    func sleep(until deadline: Duration, on clock: ElapsedClock) async throws -> Bool {
        let sleep = Task { try await clock.sleep(until: deadline) }
        current.withLock { $0 = sleep }
        defer { current.withLock { if $0 == sleep { $0 = nil } } }
        do {
            try await withTaskCancellationHandler { try await sleep.value } onCancel: { sleep.cancel() }
            return true
        } catch {
            try Task.checkCancellation()
            return false
        }
    }

    /// Sleeps for `length` (see `sleep(until:on:)`).
    @discardableResult
    func sleep(for length: Duration, on clock: ElapsedClock) async throws -> Bool {
        try await sleep(until: clock.now + length, on: clock)
    }

    /// Ends the sleep under way, if any.
    func wake() { current.withLock { $0 }?.cancel() }
}
