/// A clock seen as the time passed since it was made, so the scheduler and the core can
/// hold any clock (the system's, or a manual one in tests) without being generic over it.
public struct ElapsedClock: Sendable {
    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleeper = { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) }
    }

    /// Time since the clock was made.
    public var now: Duration { elapsed() }

    /// Returns once `now` has reached `deadline`; throws if the task is cancelled first.
    public func sleep(until deadline: Duration) async throws { try await sleeper(deadline) }
}
