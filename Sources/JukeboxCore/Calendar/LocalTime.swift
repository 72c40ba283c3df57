#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The local wall-clock reading that time windows are evaluated against.
public struct LocalTime: Sendable, Hashable, CustomStringConvertible {
    public let weekday: Weekday
    public let secondOfDay: Int

    public init(weekday: Weekday, secondOfDay: Int) {
        self.weekday = weekday
        self.secondOfDay = secondOfDay
    }

    public init(weekday: Weekday, _ time: TimeOfDay) {
        self.init(weekday: weekday, secondOfDay: time.minuteOfDay * 60)
    }

    /// Wall-clock reading of a UTC instant shifted by a fixed offset. Tests and fakes use this;
    /// the daemon uses `SystemLocalTime`, which follows the zone's DST rules.
    public init(epochSeconds: Int64, utcOffsetSeconds: Int64 = 0) {
        let local = epochSeconds + utcOffsetSeconds
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        // 1970-01-01 was a Thursday.
        self.weekday = Weekday(rawValue: Int(((days % 7) + 7 + 4) % 7))!
        self.secondOfDay = Int(local - days * 86_400)
    }

    public var description: String {
        "\(weekday) " + TimeOfDay(minuteOfDay: secondOfDay / 60)!.description
    }
}
