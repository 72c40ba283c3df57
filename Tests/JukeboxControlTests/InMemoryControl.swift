import JukeboxControl
import JukeboxCore
import JukeboxProtocol

/// An in-memory jukebox behind the control protocol: a FIFO of tickets and a few settings,
/// recording every call, so the handler and the server are tested without audio.
actor InMemoryControl: JukeboxControlling {
    nonisolated let events = EventBus()
    let clipIDs: Set<String>
    var waiting: [EntryInfo] = []
    var calls: [String] = []
    var level = 100
    var paused = false
    var capacity = 10_000
    var reloadProblems: [String]?
    private var nextTicket: UInt64 = 1

    init(clips: Set<String> = ["ward", "water", "walk"]) { clipIDs = clips }

    func setCapacity(_ capacity: Int) { self.capacity = capacity }
    func setReloadProblems(_ problems: [String]?) { reloadProblems = problems }

    func enqueue(_ names: [String], withCue: Bool, origin: String) async throws(RPCError) -> EnqueueResult {
        calls.append("enqueue \(names.joined(separator: ",")) cue=\(withCue) from \(origin)")
        for name in names where !clipIDs.contains(name) {
            throw .unknownClip(name, suggestions: clipIDs.filter { editDistance($0, name) <= 2 }.sorted())
        }
        guard waiting.count + names.count <= capacity else { throw .queueFull("\(QueueFullError(capacity: capacity))") }
        var entries: [EntryInfo] = []
        for name in names {
            let entry = EntryInfo(ticket: nextTicket, clip: name, title: name, file: "\(name).wav", origin: origin, position: waiting.count + 1)
            nextTicket += 1
            waiting.append(entry)
            entries.append(entry)
        }
        return EnqueueResult(entries: entries)
    }

    func queue() async -> QueueResult { calls.append("queue"); return QueueResult(playing: nil, waiting: waiting) }

    func status() async -> StatusResult {
        calls.append("status")
        return StatusResult(session: "test", device: "fake", deviceState: "ok", playing: nil, queueLength: waiting.count,
                            paused: paused, volume: level, nextPick: nil, uptime: 1, played: 0, failed: 0)
    }

    func skip() async -> SkipResult { calls.append("skip"); return SkipResult(skipped: nil) }

    func remove(_ tickets: [UInt64]) async -> RemoveResult {
        calls.append("remove \(tickets)")
        let present = Set(waiting.map(\.ticket))
        waiting.removeAll { tickets.contains($0.ticket) }
        return RemoveResult(removed: tickets.filter(present.contains), notWaiting: tickets.filter { !present.contains($0) })
    }

    func clear() async -> RemoveResult {
        calls.append("clear")
        defer { waiting = [] }
        return RemoveResult(removed: waiting.map(\.ticket), notWaiting: [])
    }

    func pause() async -> PauseResult { calls.append("pause"); paused = true; return PauseResult(paused: true) }
    func resume() async -> PauseResult { calls.append("resume"); paused = false; return PauseResult(paused: false) }
    func pick() async -> PickResult { calls.append("pick"); return PickResult(entry: nil) }

    func clips() async -> ClipsResult {
        calls.append("clips")
        return ClipsResult(clips: clipIDs.sorted().map {
            ClipInfo(id: $0, title: $0, file: "\($0).wav", duration: 1, enabled: true, windowOpen: true, timesPlayed: 0, lastPlayed: nil, problem: nil)
        })
    }

    func history(limit: Int) async -> HistoryResult { calls.append("history \(limit)"); return HistoryResult(plays: []) }

    func volume(_ level: Int?) async -> VolumeResult {
        calls.append("volume \(level.map(String.init) ?? "-")")
        if let level { self.level = level }
        return VolumeResult(volume: self.level)
    }

    var marks: UInt64 = 0
    var commits: [UInt64] = []
    func markChange() async -> UInt64 { marks += 1; return marks }
    var failCommits = false
    func setFailCommits(_ fail: Bool) { failCommits = fail }
    func commit(through mark: UInt64) async throws(RPCError) {
        if failCommits { throw .stateNotSaved("disk full") }
        commits.append(mark)
    }

    func reload() async throws(RPCError) -> ReloadResult {
        calls.append("reload")
        if let reloadProblems { throw .sessionInvalid(reloadProblems) }
        return ReloadResult(session: "test", clips: clipIDs.count)
    }
}
