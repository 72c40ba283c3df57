/// The rules of a time zone, as far as schedules need them: the offset from UTC in force at
/// any moment. Local clock times are turned into moments through it, daylight-saving gaps
/// and repeated hours included (`moment(of:at:)`).
public protocol LocalZone: Sendable {
    /// Seconds east of UTC in force at `epochSeconds`.
    func utcOffset(at epochSeconds: Int64) -> Int
}

/// A zone that never changes its offset: UTC, or a test's fixed clock.
public struct FixedOffsetZone: LocalZone {
    public let seconds: Int
    public init(seconds: Int) { self.seconds = seconds }
    public func utcOffset(at epochSeconds: Int64) -> Int { seconds }
}

extension LocalZone {
    /// The local date and second of the day at `epochSeconds`.
    public func localTime(at epochSeconds: Int64) -> LocalTime {
        let offset = utcOffset(at: epochSeconds)
        let local = epochSeconds + Int64(offset)
        let days = Int(local >= 0 ? local / 86_400 : (local - 86_399) / 86_400)
        return LocalTime(date: CivilDate(daysSinceEpoch: days), secondOfDay: Int(local - Int64(days) * 86_400), utcOffset: offset)
    }

    /// The moment the local clock reads `secondOfDay` on `date`.
    /// - A time that occurs twice (the hour repeated when clocks go back) is its first
    ///   occurrence, so it happens once.
    /// - A time the clocks skip (the hour lost when they go forward) is the moment they skip
    ///   to: 02:30 on a night that jumps from 02:00 to 03:00 is 03:00.
    public func moment(of date: CivilDate, at secondOfDay: Int) -> Int64 {
        let local = Int64(date.daysSinceEpoch) * 86_400 + Int64(secondOfDay)
        // The offsets half a day either side: a zone changes its offset at most once in a day.
        let before = utcOffset(at: local - 43_200), after = utcOffset(at: local + 43_200)
        let candidates = [local - Int64(before), local - Int64(after)].filter { utcOffset(at: $0) == Int(local - $0) }
        if let first = candidates.min() { return first }
        // In a gap: the clocks jumped over this reading. Find the jump between the two readings.
        var low = local - Int64(max(before, after)), high = local - Int64(min(before, after))
        if utcOffset(at: low) == utcOffset(at: high) { return local - Int64(after) }
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if utcOffset(at: middle) == utcOffset(at: low) { low = middle } else { high = middle }
        }
        return high
    }
}
