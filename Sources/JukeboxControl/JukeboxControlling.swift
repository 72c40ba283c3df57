import JukeboxCore
import JukeboxProtocol

/// What the control socket can ask of the daemon. `DaemonController` implements it on the
/// real queue and scheduler; the request handler only maps JSON to these calls.
public protocol JukeboxControlling: Sendable {
    var events: EventBus { get }
    func enqueue(_ names: [String], withCue: Bool, origin: String) async throws(RPCError) -> EnqueueResult
    func queue() async -> QueueResult
    func status() async -> StatusResult
    func skip() async -> SkipResult
    func remove(_ tickets: [UInt64]) async throws(RPCError) -> RemoveResult
    func clear() async throws(RPCError) -> RemoveResult
    func pause() async throws(RPCError) -> PauseResult
    func resume() async throws(RPCError) -> PauseResult
    func pick() async throws(RPCError) -> PickResult
    func clips() async -> ClipsResult
    func history(limit: Int) async -> HistoryResult
    /// Sets the volume (0–100) when `level` is given; returns the volume now.
    func volume(_ level: Int?) async throws(RPCError) -> VolumeResult
    func reload() async throws(RPCError) -> ReloadResult
    /// The methods above change state in memory only. Right after one, `markChange()` names
    /// the change; `commit(through:)` returns once it is durable, and only then is the change
    /// reported done to its client.
    func markChange() async -> UInt64
    func commit(through mark: UInt64) async throws(RPCError)
}

/// A session with what start-up learnt about its clip files.
public struct ClipCatalog: Sendable {
    public var session: Session
    public var durations: [String: Duration]
    /// Why a clip cannot be played, by clip id.
    public var problems: [String: String]

    public init(session: Session, durations: [String: Duration] = [:], problems: [String: String] = [:]) {
        self.session = session
        self.durations = durations
        self.problems = problems
    }

    public var playableClips: [Clip] { session.clips.filter { problems[$0.id] == nil } }
}

extension EntryInfo {
    public init(_ entry: QueueEntry, position: Int? = nil) {
        self.init(ticket: entry.ticket, clip: entry.clip.id, title: entry.clip.title, file: entry.clip.source.file,
                  origin: entry.origin.description, position: position)
    }
}
