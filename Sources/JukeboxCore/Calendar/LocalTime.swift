/// A reading of the local wall clock: the date, the second of the day, and the offset from
/// UTC in force (so a sun time, worked out as a moment, can be placed on the same clock).
public struct LocalTime: Sendable, Hashable, CustomStringConvertible {
    public let date: CivilDate
    public let secondOfDay: Int
    /// Seconds east of UTC.
    public let utcOffset: Int

    public init(date: CivilDate, secondOfDay: Int, utcOffset: Int = 0) {
        self.date = date
        self.secondOfDay = secondOfDay
        self.utcOffset = utcOffset
    }

    /// A reading on a day of the week, for tests of rules that look at weekdays only: the
    /// day is taken from the week of Sunday 2026-01-04, in UTC.
    public init(weekday: Weekday, secondOfDay: Int) {
        self.init(date: CivilDate(year: 2026, month: 1, day: 4 + weekday.rawValue)!, secondOfDay: secondOfDay)
    }

    public init(weekday: Weekday, _ time: TimeOfDay) {
        self.init(weekday: weekday, secondOfDay: time.minuteOfDay * 60)
    }

    /// Wall-clock reading of a UTC instant shifted by a fixed offset. Tests and fakes use this;
    /// the daemon uses `SystemLocalTime`, which follows the zone's DST rules.
    public init(epochSeconds: Int64, utcOffsetSeconds: Int64 = 0) {
        self = FixedOffsetZone(seconds: Int(utcOffsetSeconds)).localTime(at: epochSeconds)
    }

    public var weekday: Weekday { date.weekday }

    /// The moment this reading is, in seconds since the Unix epoch.
    public var epochSeconds: Int64 { Int64(date.daysSinceEpoch) * 86_400 + Int64(secondOfDay) - Int64(utcOffset) }

    public var description: String {
        "\(weekday) " + TimeOfDay(minuteOfDay: secondOfDay / 60)!.description
    }
}
