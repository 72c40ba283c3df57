#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system's local time: `localtime_r` under the process's `TZ`, so DST changes are
/// applied by the C library's zone rules rather than by arithmetic of our own.
public struct SystemLocalTime: LocalTimeSource, LocalZone {
    public init() {}

    public func now() -> LocalTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return localTime(at: Int64(spec.tv_sec))
    }

    public func utcOffset(at epochSeconds: Int64) -> Int {
        var seconds = time_t(epochSeconds)
        var fields = tm()
        localtime_r(&seconds, &fields)
        return Int(fields.tm_gmtoff)
    }

    public static func localTime(epochSeconds: Int64) -> LocalTime {
        SystemLocalTime().localTime(at: epochSeconds)
    }
}
