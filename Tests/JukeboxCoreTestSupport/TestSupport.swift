import JukeboxCore
import Logging

extension TimeSource {
    /// Time driven by a `ManualClock`: the wall clock reads `start` (its weekday and time, in
    /// UTC) at the clock's zero and moves on with the clock, in whole seconds.
    public static func driven(by clock: ManualClock, start: LocalTime) -> TimeSource {
        // 1970-01-04 was a Sunday: pick the first week's matching day.
        let startEpochSeconds = Int64(3 + start.weekday.rawValue) * 86_400 + Int64(start.secondOfDay)
        return TimeSource(
            clock: clock, wallClock: { Double(startEpochSeconds + clock.now.offset.components.seconds) }, zone: FixedOffsetZone(seconds: 0))
    }

    /// Time that stands still at `reading` on the wall clock: a rule looked at on one date,
    /// at one moment.
    public static func standing(at reading: LocalTime, clock: ManualClock = ManualClock()) -> TimeSource {
        TimeSource(clock: clock, wallClock: { Double(reading.epochSeconds) }, zone: FixedOffsetZone(seconds: reading.utcOffset))
    }
}
