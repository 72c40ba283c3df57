/// A daily window of local time, optionally limited to some days. A window whose end is not
/// after its start crosses midnight; `days` then names the day on which the window *starts*,
/// so a Friday 22:00–02:00 window is still open at 01:00 on Saturday.
public struct TimeWindow: Sendable, Hashable {
    public let from: TimeOfDay
    public let to: TimeOfDay
    /// nil means every day.
    public let days: Set<Weekday>?

    public init(from: TimeOfDay, to: TimeOfDay, days: Set<Weekday>? = nil) {
        self.from = from
        self.to = to
        self.days = days
    }

    public var crossesMidnight: Bool { to <= from }

    public func contains(_ time: LocalTime) -> Bool {
        let second = time.secondOfDay
        let start = from.minuteOfDay * 60, end = to.minuteOfDay * 60
        let startDay: Weekday
        if !crossesMidnight {
            guard second >= start, second < end else { return false }
            startDay = time.weekday
        } else if second >= start {
            startDay = time.weekday
        } else if second < end {
            startDay = time.weekday.previous
        } else {
            return false
        }
        return days?.contains(startDay) ?? true
    }
}

extension Array where Element == TimeWindow {
    /// An empty list means "no restriction".
    public func allow(_ time: LocalTime) -> Bool {
        isEmpty || contains { $0.contains(time) }
    }
}
