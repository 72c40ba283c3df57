/// A local wall-clock time, `"HH:MM"`, stored as minutes after midnight. `"24:00"` is accepted
/// as the end of a window so a window can run to the end of the day.
public struct TimeOfDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let minuteOfDay: Int

    public init?(minuteOfDay: Int) {
        guard (0...1440).contains(minuteOfDay) else { return nil }
        self.minuteOfDay = minuteOfDay
    }

    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let hour = Int(parts[0]), let minute = Int(parts[1]),
              minute < 60, hour < 24 || (hour == 24 && minute == 0)
        else { return nil }
        self.minuteOfDay = hour * 60 + minute
    }

    public static func < (lhs: TimeOfDay, rhs: TimeOfDay) -> Bool { lhs.minuteOfDay < rhs.minuteOfDay }

    public var description: String {
        let hour = minuteOfDay / 60, minute = minuteOfDay % 60
        return (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }
}
