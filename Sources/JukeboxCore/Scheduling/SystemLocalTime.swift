#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system's local time: `localtime_r` under the process's `TZ`, so DST changes are
/// applied by the C library's zone rules rather than by arithmetic of our own.
public struct SystemLocalTime: LocalTimeSource {
    public init() {}

    public func now() -> LocalTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Self.localTime(epochSeconds: Int64(spec.tv_sec))
    }

    public static func localTime(epochSeconds: Int64) -> LocalTime {
        var seconds = time_t(epochSeconds)
        var fields = tm()
        localtime_r(&seconds, &fields)
        let secondOfDay = Int(fields.tm_hour) * 3600 + Int(fields.tm_min) * 60 + min(Int(fields.tm_sec), 59)
        return LocalTime(weekday: Weekday(rawValue: Int(fields.tm_wday)) ?? .sun, secondOfDay: secondOfDay)
    }
}
