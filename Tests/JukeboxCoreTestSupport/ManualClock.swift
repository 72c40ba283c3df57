import Synchronization

/// A clock that moves only when a test says so. Unlike a clock that yields a few times and
/// hopes the code under test has gone to sleep, tests here wait for the sleep itself
/// (`waitForSleepers`) before advancing, so no step depends on scheduling luck.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol {
        public var offset: Duration
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Sleeper] = []
        /// Tests waiting for sleepers: each until its condition holds of the sleepers' deadlines.
        var waiters: [(ready: @Sendable ([Instant]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (immediate, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    if deadline <= state.now || Task.isCancelled { return (true, []) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    let deadlines = state.sleepers.map(\.deadline)
                    let ready = state.waiters.filter { $0.ready(deadlines) }.map(\.continuation)
                    state.waiters.removeAll { $0.ready(deadlines) }
                    return (false, ready)
                }
                if immediate {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
                ready.forEach { $0.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Returns once at least `count` tasks are asleep on this clock.
    public func waitForSleepers(_ count: Int = 1) async {
        await waitForSleepers { $0.count >= count }
    }

    /// Returns once a task sleeps until `deadline` (say, a retry `duration` from now).
    public func waitForSleeper(until deadline: Instant) async {
        await waitForSleepers { $0.contains(deadline) }
    }

    private func waitForSleepers(where ready: @escaping @Sendable ([Instant]) -> Bool) async {
        await withCheckedContinuation { continuation in
            let isReady = state.withLock { state in
                if ready(state.sleepers.map(\.deadline)) { return true }
                state.waiters.append((ready, continuation))
                return false
            }
            if isReady { continuation.resume() }
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        due.forEach { $0.continuation.resume() }
    }

    /// Advances exactly to the earliest pending deadline.
    /// Moves from one sleeper's deadline to the next until `condition` holds; false if the
    /// task was cancelled first (a test's time limit), so that a condition that never comes
    /// fails the test rather than spinning on.
    public func advance(until condition: @Sendable () async -> Bool) async -> Bool {
        while !(await condition()) {
            if Task.isCancelled { return false }
            if sleeperCount > 0 { advanceToNextDeadline() }
            await Task.yield()
        }
        return true
    }

    public func advanceToNextDeadline() {
        let next = state.withLock { state in state.sleepers.map(\.deadline).min() }
        if let next { advance(by: now.duration(to: next)) }
    }
}
