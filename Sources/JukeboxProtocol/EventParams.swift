/// Parameters of the event notifications sent to subscribed connections. The method name is
/// the event: `queued`, `playing`, `finished`, `removed`, `paused`, `resumed`, `scheduled`,
/// `device`, `session`, `volume`, `held`, `quiet`, `cut`, `ducked`, `restored`, `bed`, `plans`,
/// `alert`.
public struct EventParams: Sendable, Equatable, Codable {
    public var entry: EntryInfo?
    /// For `finished`: `completed`, `skipped` or `failed`.
    public var outcome: String?
    public var reason: String?
    public var tickets: [UInt64]?
    public var nextPick: Double?
    public var state: String?
    public var session: String?
    public var clips: Int?
    /// For `volume`: 0–100.
    public var volume: Int?
    /// For `quiet`.
    public var quiet: QuietInfo?
    /// For `ducked` (all that are down now) and `restored` (those put back): players by name.
    public var players: [String]?
    /// For `alert`: the alert on now; absent when the one on ended (`state` is then `off`).
    public var alert: AlertInfo?

    public init(
        entry: EntryInfo? = nil, outcome: String? = nil, reason: String? = nil, tickets: [UInt64]? = nil, nextPick: Double? = nil,
        state: String? = nil, session: String? = nil, clips: Int? = nil, volume: Int? = nil, quiet: QuietInfo? = nil, players: [String]? = nil,
        alert: AlertInfo? = nil
    ) {
        self.alert = alert
        self.players = players
        self.quiet = quiet
        self.volume = volume
        self.entry = entry
        self.outcome = outcome
        self.reason = reason
        self.tickets = tickets
        self.nextPick = nextPick
        self.state = state
        self.session = session
        self.clips = clips
    }
}
