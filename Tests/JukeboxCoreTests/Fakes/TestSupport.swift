import JukeboxCore
import Logging

/// A local time source driven by a `ManualClock`, starting at a given weekday and time.
struct ClockDrivenLocalTime: LocalTimeSource {
    let clock: ManualClock
    /// Seconds since the Unix epoch at the clock's zero, in local time.
    let startEpochSeconds: Int64

    init(clock: ManualClock, start: LocalTime) {
        self.clock = clock
        // 1970-01-04 was a Sunday: pick the first week's matching day.
        startEpochSeconds = Int64(3 + start.weekday.rawValue) * 86_400 + Int64(start.secondOfDay)
    }

    func now() -> LocalTime {
        LocalTime(epochSeconds: startEpochSeconds + clock.now.offset.components.seconds)
    }
}

/// A local time that stands still: a rule looked at on one date, at one moment.
struct FixedLocalTime: LocalTimeSource {
    let time: LocalTime
    init(_ time: LocalTime) { self.time = time }
    func now() -> LocalTime { time }
}
