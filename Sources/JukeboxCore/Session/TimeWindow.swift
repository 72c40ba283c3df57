/// A daily window of local time, optionally limited to some days and dates. Either end may
/// be a sun time (`"sunset-15m"`). A window whose end is not after its start crosses
/// midnight; `days`, `dates` and `except` then name the day on which the window *starts*,
/// so a Friday 22:00–02:00 window is still open at 01:00 on Saturday.
///
/// On a day without the sun time (polar day or night) the window follows the sun: a
/// sunrise-to-sunset window stays open all day while the sun stays up, and never opens while
/// it stays down; a sunset-to-sunrise window does the opposite.
public struct TimeWindow: Sendable, Hashable, CustomStringConvertible {
    public let from: DayTime
    public let to: DayTime
    /// nil means every day.
    public let days: Set<Weekday>?
    /// The dates the window opens on (`dates`, `except`).
    public let filter: DateFilter

    public init(from: DayTime, to: DayTime, days: Set<Weekday>? = nil, filter: DateFilter = .always) {
        self.from = from
        self.to = to
        self.days = days
        self.filter = filter
    }

    public init(from: TimeOfDay, to: TimeOfDay, days: Set<Weekday>? = nil) {
        self.init(from: .clock(from), to: .clock(to), days: days)
    }

    /// Whether any end is a sun time (the session then needs a `location`).
    public var usesSun: Bool { from.sunEvent != nil || to.sunEvent != nil }

    public var crossesMidnight: Bool {
        if case .clock(let start) = from, case .clock(let end) = to { return end <= start }
        return false
    }

    public func contains(_ time: LocalTime, location: GeoLocation? = nil, holidays: [DateRule] = []) -> Bool {
        // The window that starts today, or yesterday's running on past midnight.
        for (startDate, second) in [(time.date, time.secondOfDay), (time.date.adding(days: -1), time.secondOfDay + 86_400)] {
            guard let (start, end) = span(on: startDate, utcOffset: time.utcOffset, location: location) else { continue }
            guard second >= start, second < end else { continue }
            if days?.contains(startDate.weekday) ?? true, filter.allows(startDate, holidays: holidays) { return true }
        }
        return false
    }

    /// Seconds after the start date's midnight at which the window opens and closes; the
    /// close is after the open (a window that crosses midnight ends on the next day).
    func span(on date: CivilDate, utcOffset: Int, location: GeoLocation?) -> (Int, Int)? {
        let zone = FixedOffsetZone(seconds: utcOffset)
        guard let start = Self.second(of: from, on: date, zone: zone, location: location),
              let end = Self.second(of: to, on: date, zone: zone, location: location) else { return nil }
        guard end.second <= start.second else { return (start.second, end.second) }
        // Crossing midnight: a clock window of 22:00–02:00; or one the sun has shut, which is empty.
        return (start.second, start.polar || end.polar ? start.second : end.second + 86_400)
    }

    /// Where `time` falls on `date`. A sun time the sun does not give that day falls where
    /// the sun would put it: a rise while the sun stays up at the start of the day, and
    /// while it stays down at the end; a set the other way round. `polar`: the sun did not give it.
    static func second(of time: DayTime, on date: CivilDate, zone: any LocalZone, location: GeoLocation?) -> (second: Int, polar: Bool)? {
        let rises = time.sunEvent.map { $0 == .dawn || $0 == .sunrise } ?? false
        switch time.secondOfDay(on: date, zone: zone, location: location) {
        case .at(let second): return (second, false)
        case .sunStaysUp: return (rises ? 0 : 86_400, true)
        case .sunStaysDown: return (rises ? 86_400 : 0, true)
        case .needsLocation: return nil
        }
    }

    public var description: String {
        var text = "\(from)-\(to)"
        if let days { text += "@" + Weekday.describe(days) }
        return text
    }
}

extension Array where Element == TimeWindow {
    /// An empty list means "no restriction".
    public func allow(_ time: LocalTime, location: GeoLocation? = nil, holidays: [DateRule] = []) -> Bool {
        isEmpty || contains { $0.contains(time, location: location, holidays: holidays) }
    }

    /// Whether any of the windows holds `moment` (false for an empty list).
    public func hold(_ moment: Int64, zone: any LocalZone, location: GeoLocation?, holidays: [DateRule]) -> Bool {
        let time = zone.localTime(at: moment)
        return contains { $0.contains(time, location: location, holidays: holidays) }
    }

    /// The first moment after `moment`, within `days` days, at which whether any window holds
    /// changes; nil when it never does (no windows, or always open). Only where a window opens
    /// or shuts, or at midnight (a window's days and dates), can it change, so only those
    /// moments are looked at.
    public func nextChange(after moment: Int64, zone: any LocalZone, location: GeoLocation?, holidays: [DateRule], days: Int = 8) -> Int64? {
        guard !isEmpty else { return nil }
        let now = hold(moment, zone: zone, location: location, holidays: holidays)
        return changes(around: moment, zone: zone, location: location, days: -1...days).filter { $0 > moment }.sorted()
            .first { hold($0, zone: zone, location: location, holidays: holidays) != now }
    }

    /// The moment at or before `moment`, within `days` days, at which the windows last began
    /// or stopped holding, as they do at `moment`; nil when that is longer ago.
    public func lastChange(atOrBefore moment: Int64, zone: any LocalZone, location: GeoLocation?, holidays: [DateRule], days: Int = 8) -> Int64? {
        guard !isEmpty else { return nil }
        let now = hold(moment, zone: zone, location: location, holidays: holidays)
        return changes(around: moment, zone: zone, location: location, days: -days...0).filter { $0 <= moment }.sorted(by: >)
            .first { hold($0 - 1, zone: zone, location: location, holidays: holidays) != now }
    }

    /// Every moment, on the days `days` from the one holding `moment`, at which a window opens
    /// or shuts, and each midnight.
    private func changes(around moment: Int64, zone: any LocalZone, location: GeoLocation?, days: ClosedRange<Int>) -> [Int64] {
        let today = zone.localTime(at: moment).date
        var candidates: [Int64] = []
        for offset in days {
            let date = today.adding(days: offset)
            candidates.append(zone.moment(of: date, at: 0))
            for window in self {
                for end in [window.from, window.to] {
                    if case .at(let second) = end.secondOfDay(on: date, zone: zone, location: location) {
                        candidates.append(zone.moment(of: date, at: second))
                    }
                }
            }
        }
        return candidates
    }
}
