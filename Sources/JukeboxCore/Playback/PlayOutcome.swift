/// How one play ended.
public enum PlayOutcome: Sendable, Equatable {
    case completed(duration: Duration)
    /// Stopped early: skipped, or the daemon is shutting down.
    case stopped
    /// The clip itself could not be played; the reason names the file.
    case failed(reason: String)
    /// The file ended before the length its header gave (it was cut short while it played,
    /// or is damaged); the reason says how much was played.
    case endedEarly(reason: String)
    /// A fixed time that did not play: its moment passed longer ago than it may be played
    /// late (the device was missing, the daemon was down, the clock jumped).
    case missed(reason: String)
    /// A fixed time that was not played, for a reason that is no fault: quiet.
    case notPlayed(reason: String)
    /// A fixed time that came while an alert was on, and was held back by it (the reason
    /// names the alert): not missed, and not played afterwards.
    case heldBack(reason: String)
    /// An alert's whole run, as one play: from its start to its end or to the alert that
    /// replaced it; the reason says how often it sounded and who ended it.
    case alert(reason: String)

    /// How clients, events and the state file name it: `completed`, `skipped`, `failed`,
    /// `ended-early`, `missed`, `held-back` or `alert`.
    public var name: String {
        switch self {
        case .completed: "completed"
        case .stopped, .notPlayed: "skipped"
        case .failed: "failed"
        case .endedEarly: "ended-early"
        case .missed: "missed"
        case .heldBack: "held-back"
        case .alert: "alert"
        }
    }

    /// Played up to the end of what was there: its tail is worth letting drain.
    public var reachedItsEnd: Bool {
        switch self {
        case .completed, .endedEarly: true
        default: false
        }
    }

    public var reason: String? {
        switch self {
        case .failed(let reason), .endedEarly(let reason), .missed(let reason), .notPlayed(let reason), .heldBack(let reason), .alert(let reason): reason
        default: nil
        }
    }
}
