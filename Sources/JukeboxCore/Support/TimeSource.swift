/// Time as the jukebox keeps it, in one value that every part takes and tests drive: a
/// clock that measures (gaps, retries, idle times; every sleep is on it), the wall clock
/// (timestamps people read, and what keeps to it: `at` times, quiet hours, volume steps),
/// and the zone local times are worked out in. The daemon's is the system's (`system`).
public struct TimeSource: Sendable {
    /// Measures durations; every sleep is on it.
    public let clock: any Clock<Duration>
    /// Seconds since the Unix epoch.
    public let wallClock: WallClock
    /// The rules of the local time zone.
    public let zone: any LocalZone

    public init(
        clock: any Clock<Duration> = ContinuousClock(), wallClock: @escaping WallClock = SystemWallClock.now,
        zone: any LocalZone = SystemLocalTime()
    ) {
        self.clock = clock
        self.wallClock = wallClock
        self.zone = zone
    }

    /// The system's clocks and zone.
    public static var system: TimeSource { TimeSource() }

    /// The wall clock's time in whole seconds since the epoch.
    public func wallSeconds() -> Int64 { Int64(wallClock().rounded(.down)) }

    /// The local date and time now.
    public func localNow() -> LocalTime { zone.localTime(at: wallSeconds()) }
}
