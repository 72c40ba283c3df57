/// What becomes of a fixed time that could not play on time (the session's `missed`): the
/// device was missing, the daemon was stopped, the clock jumped.
public enum MissedTimes: Sendable, Equatable {
    /// It is not played late: it is reported missed (the default).
    case skip
    /// It plays as soon as it can (the next start, the device back), as long as that is
    /// within this long of its time (`playLateWithin`); later than that it is missed.
    case playLate(within: Duration)

    /// How the session file writes it.
    public var name: String {
        switch self {
        case .skip: "skip"
        case .playLate: "play-late"
        }
    }
}
