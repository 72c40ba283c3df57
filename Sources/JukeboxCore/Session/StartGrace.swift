/// How late a fixed time may still start, and the one rule that calls it missed. The
/// timetable asks it of a time that passed, the queue of an entry whose device was missing,
/// and the start of an entry saved before a stop, so all three decide alike.
public struct StartGrace: Sendable, Equatable {
    /// How late an `at` time still plays as if on time, after a short outage (`atGrace`).
    public var onTime: Duration
    /// What becomes of one later than that (`missed`, `playLateWithin`).
    public var missed: MissedTimes

    public init(onTime: Duration, missed: MissedTimes) {
        self.onTime = onTime
        self.missed = missed
    }

    /// The latest a fixed time may start: `onTime`, or with `play-late` the longer of it and
    /// `playLateWithin`.
    public var latest: Duration {
        switch missed {
        case .skip: onTime
        case .playLate(let within): max(onTime, within)
        }
    }

    /// Whether a time due `late` after its moment may no longer start: it is missed.
    public func isMissed(late: Duration) -> Bool { late > latest }

    /// Whether a time due at `due` (seconds since 1970) may no longer start at `now`.
    public func isMissed(due: Double, now: Double) -> Bool { now - due > latest.secondsDouble }

    /// Whether one that still starts `late` after its moment starts late (`play-late`) rather
    /// than on time.
    public func startsLate(late: Duration) -> Bool { late > onTime }

    /// The limit in a reason's words: `atGrace (2m)`, or `playLateWithin (1h)` with
    /// `missed: play-late`.
    public var words: String {
        switch missed {
        case .skip: "atGrace (\(DurationText.format(onTime)))"
        case .playLate: "playLateWithin (\(DurationText.format(latest)))"
        }
    }
}
