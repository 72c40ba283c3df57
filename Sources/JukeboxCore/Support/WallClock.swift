#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Seconds since the Unix epoch, for timestamps people read (history, next pick).
public typealias WallClock = @Sendable () -> Double

public enum SystemWallClock {
    public static let now: WallClock = {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// Whole seconds on a wall clock, and how long what keeps time by it (the `at` times, quiet
/// hours, the volume schedule) sleeps between looks.
public enum WallTime {
    /// The longest sleep between looks at the wall clock, so a clock that is set (a Pi
    /// without a battery-backed clock, set by NTP after boot) or a new zone is seen soon.
    public static let longestNap: Int64 = 60
    /// How long it sleeps with nothing to keep, unless a change wakes it: a year.
    public static let untilWoken: Int64 = 365 * 86_400
    /// How far ahead the next plan time is looked for: as far as a plan may be set by hand.
    public static let planLookAhead: Int64 = 400 * 86_400

    /// Seconds to sleep at `now` before the next look: until `next`, at most `longestNap`,
    /// and at least one; `untilWoken` when there is nothing to keep.
    public static func wait(now: Int64, next: Int64?, nothingToKeep: Bool) -> Int64 {
        guard !nothingToKeep else { return untilWoken }
        return max(min(next.map { $0 - now } ?? longestNap, longestNap), 1)
    }
}
