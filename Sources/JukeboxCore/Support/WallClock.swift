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
