/// What survives a restart: the waiting queue (with its tickets), where the shuffle bag is in
/// its cycle, pause and volume, per-clip counts and a bounded history. Clips are stored by id
/// and file so a reloaded or edited session maps them back.
public struct PersistedState: Codable, Sendable, Equatable {
    public struct Clip: Codable, Sendable, Equatable {
        public var id: String
        public var file: String
        public var path: String
        public var title: String
        public var gain: Double
        /// The folder the file must be inside when opened (`ClipSource.within`).
        public var within: String?
        /// An announcement's text (`PlayableClip.speech`); its audio is made again if need be.
        public var say: String?
        /// false for a clip that does not lower the other players (`PlayableClip.ducks`);
        /// absent when it does.
        public var duck: Bool?

        public init(id: String, file: String, path: String, title: String, gain: Double, within: String? = nil, say: String? = nil, duck: Bool? = nil) {
            self.duck = duck
            self.say = say
            self.id = id
            self.file = file
            self.path = path
            self.title = title
            self.gain = gain
            self.within = within
        }
    }

    public struct Entry: Codable, Sendable, Equatable {
        public var ticket: UInt64
        public var clip: Clip
        public var cue: Clip?
        /// nil for the scheduler, else the client's name.
        public var client: String?
        /// The front end the client came through (`Requester.FrontEnd`); absent in files of
        /// earlier versions, and for the socket.
        public var via: String?
        /// For a clip queued at one of its `at` times: that moment, in seconds since the epoch.
        public var at: Int64?
        /// A request held until quiet hours end; these follow the waiting entries.
        public var afterQuiet: Bool?
        /// Urgent: asked for with `now` (`QueueEntry.urgent`).
        public var now: Bool?
        /// Cut by an urgent entry: where it goes on from (`QueueEntry.resumeAt`).
        public var resumeAt: QueueEntry.ResumePoint?
        /// Its own level, 0–1 (`QueueEntry.Playing.volume`).
        public var volume: Double?
        /// Seconds of the clip it stops after (`QueueEntry.Playing.stopAfter`).
        public var stopAfter: Double?
        /// An alert's end clip: the alert's name (`QueueEntry.alert`). It plays at `volume`,
        /// which `maxVolume` does not hold.
        public var alert: String?

        public init(
            ticket: UInt64, clip: Clip, cue: Clip?, client: String?, at: Int64? = nil, afterQuiet: Bool? = nil, now: Bool? = nil,
            resumeAt: QueueEntry.ResumePoint? = nil, volume: Double? = nil, stopAfter: Double? = nil
        ) {
            self.volume = volume
            self.stopAfter = stopAfter
            self.afterQuiet = afterQuiet
            self.now = now
            self.resumeAt = resumeAt
            self.ticket = ticket
            self.clip = clip
            self.cue = cue
            self.client = client
            self.at = at
        }
    }

    public struct Play: Codable, Sendable, Equatable {
        public var entry: Entry
        public var startedAt: Double
        /// `completed`, `skipped`, `failed`, `ended-early` or `missed`.
        public var outcome: String
        public var reason: String?
        /// `PlayRecord.seq`.
        public var seq: UInt64?

        public init(entry: Entry, startedAt: Double, outcome: String, reason: String?) {
            self.entry = entry
            self.startedAt = startedAt
            self.outcome = outcome
            self.reason = reason
        }
    }

    public struct Bag: Codable, Sendable, Equatable {
        public var remaining: [String]
        public var lastPick: String?
        public var cycle: Int

        public init(remaining: [String], lastPick: String?, cycle: Int) {
            self.remaining = remaining
            self.lastPick = lastPick
            self.cycle = cycle
        }
    }

    /// The entry playing when this was saved, and how many times in a row it has started
    /// without finishing; absent after a clean shutdown (see `ClipPlayQueue.restore`).
    public typealias Started = ClipPlayQueue.StartMark

    public var version = 1
    public var nextTicket: UInt64
    /// In play order; a clip that was playing when the daemon stopped comes first. Requests
    /// held until quiet hours end follow, marked `afterQuiet`.
    public var waiting: [Entry]
    public var bag: Bag?
    public var paused: Bool
    public var volume: Double
    public var stats: [String: ClipStats]
    public var history: [Play]
    public var started: Started?
    /// Every `at` time up to this moment (seconds since the epoch) has been queued or
    /// reported missed.
    public var timetableUntil: Int64?
    /// Quiet set by hand (`jukebox quiet`), while it lasts.
    public var quiet: QuietHours.Override?
    /// When the volume schedule's step last applied began (seconds since the epoch): a
    /// `volume` saved after it was set by hand, and holds until the next step.
    public var volumeStepAt: Int64?
    /// Other players lowered or paused (`duck`), with the levels to put them back to.
    public var ducked: [DuckRecord]?
    /// The music bed's music was turned off (`bed off`); absent while it is on.
    public var musicOff: Bool?
    /// Day plans set by hand, by date (`YYYY-MM-DD`); absent when none is.
    public var plans: [String: DayPlans.ByHand]?
    /// The alert that is on; absent when none is.
    public var alert: SavedAlert?

    /// An alert that is on: its name, who started it (and through which front end), and when.
    public struct SavedAlert: Codable, Sendable, Equatable {
        public var name: String
        public var client: String
        public var via: String?
        /// Seconds since the epoch.
        public var since: Double

        public init(name: String, client: String, via: String?, since: Double) {
            self.name = name
            self.client = client
            self.via = via
            self.since = since
        }
    }

    public init(
        nextTicket: UInt64 = 1, waiting: [Entry] = [], bag: Bag? = nil, paused: Bool = false, volume: Double = 1,
        stats: [String: ClipStats] = [:], history: [Play] = [], started: Started? = nil, timetableUntil: Int64? = nil,
        quiet: QuietHours.Override? = nil, volumeStepAt: Int64? = nil
    ) {
        self.volumeStepAt = volumeStepAt
        self.quiet = quiet
        self.timetableUntil = timetableUntil
        self.started = started
        self.nextTicket = nextTicket
        self.waiting = waiting
        self.bag = bag
        self.paused = paused
        self.volume = volume
        self.stats = stats
        self.history = history
    }
}

extension PersistedState {
    /// The daemon's state now, from the queue, the scheduler and the player.
    static func gather(
        queue: ClipPlayQueue, scheduler: ClipJukebox, timetable: ClipTimetable, quiet: QuietHours, volume: VolumeControl, player: Player,
        ducker: Ducker
    ) async -> PersistedState {
        let saved = await queue.persisted()
        let held = saved.held.map { entry in
            var held = Entry(entry)
            held.afterQuiet = true
            return held
        }
        var state = PersistedState(
            nextTicket: saved.nextTicket, waiting: saved.entries.map(Entry.init) + held, bag: await scheduler.persistedBag(),
            paused: saved.paused, volume: await player.volume, stats: saved.stats, history: saved.history.map(Play.init),
            started: saved.started, timetableUntil: await timetable.persistedHandledUntil, quiet: await quiet.override,
            volumeStepAt: await volume.appliedSince)
        let ducked = await ducker.records
        state.ducked = ducked.isEmpty ? nil : ducked
        state.musicOff = await player.musicOn ? nil : true
        let plans = await timetable.persistedPlans
        state.plans = plans.isEmpty ? nil : plans
        state.alert = saved.alert.map { run in
            SavedAlert(name: run.name, client: run.by.name, via: run.by.frontEnd == .socket ? nil : run.by.frontEnd.rawValue, since: run.since)
        }
        return state
    }
}

extension PersistedState {
    /// The state with every waiting entry checked against the session again, since the file
    /// may have been edited by someone else: a clip the session lists plays as before; any
    /// other file must lie inside the clips folder, and is checked again when it is opened
    /// (`ClipSource.within`). An entry whose clip or cue is anywhere else is not queued: it
    /// goes to the history as failed, with the reason, and is returned so it can be logged.
    public func confined(to session: Session, now: Double) -> (state: PersistedState, refused: [Entry]) {
        let listed = Set(session.clips.map(\.source.path) + (session.cue.map { [$0.path] } ?? []))
        func checked(_ clip: Clip) -> Clip? {
            // An announcement names no file: its audio comes from the speech engine.
            if let text = clip.say {
                guard case .success(let spoken) = SpeechText.check(text) else { return nil }
                return Clip(PlayableClip.spoken(spoken))
            }
            if listed.contains(clip.path) { return clip }
            guard FilePath.isInside(FilePath.normalize(clip.path), session.clipsDirectory) else { return nil }
            var confined = clip
            confined.within = session.clipsDirectory
            return confined
        }
        var state = self
        var refused: [Entry] = []
        state.waiting = waiting.compactMap { entry in
            let cue = entry.cue.map(checked)
            guard let clip = checked(entry.clip), cue != .some(nil) else {
                refused.append(entry)
                return nil
            }
            var entry = entry
            entry.clip = clip
            entry.cue = cue ?? nil
            return entry
        }
        for entry in refused {
            let reason = entry.clip.say != nil
                ? "the announcement's text is not valid; skipped"
                : "\(entry.clip.path) is outside the session's clips folder \(session.clipsDirectory); skipped"
            state.history.append(Play(entry: entry, startedAt: now, outcome: "failed", reason: reason))
        }
        if let started = state.started, !state.waiting.contains(where: { $0.ticket == started.ticket }) { state.started = nil }
        return (state, refused)
    }
}

extension PersistedState.Clip {
    public init(_ clip: PlayableClip) {
        self.init(
            id: clip.id, file: clip.source.file, path: clip.source.path, title: clip.title, gain: clip.gainDecibels, within: clip.source.within,
            say: clip.speech, duck: clip.ducks ? nil : false)
    }

    var playable: PlayableClip {
        PlayableClip(id: id, source: ClipSource(file: file, path: path, within: within), title: title, gainDecibels: gain, speech: say, ducks: duck ?? true)
    }
}

extension PersistedState.Entry {
    public init(_ entry: QueueEntry) {
        self.init(ticket: entry.ticket, clip: .init(entry.clip), cue: entry.cue.map(PersistedState.Clip.init),
                  client: entry.origin.requester?.name,
                  at: { if case .fixedTime(let moment) = entry.origin { moment } else { nil } }(),
                  now: entry.urgent ? true : nil, resumeAt: entry.resumeAt,
                  volume: entry.playing.volume, stopAfter: entry.playing.stopAfter?.secondsDouble)
        if let requester = entry.origin.requester, requester.frontEnd != .socket { via = requester.frontEnd.rawValue }
        alert = entry.alert
    }

    public var queueEntry: QueueEntry {
        QueueEntry(
            ticket: ticket, clip: clip.playable, cue: cue?.playable, origin: client.map { .client(.saved(name: $0, via: via)) } ?? at.map { .fixedTime($0) } ?? .scheduler,
            urgent: now == true, resumeAt: resumeAt.map { .init(frame: $0.frame, seconds: $0.seconds) },
            playing: .init(volume: volume, stopAfter: stopAfter.flatMap(QueueEntry.Playing.stopAfter(seconds:)), aboveCeiling: alert != nil),
            alert: alert)
    }
}

extension PersistedState.Play {
    init(_ record: PlayRecord) {
        self.init(entry: .init(record.entry), startedAt: record.startedAt, outcome: record.outcome.name, reason: record.outcome.reason)
        seq = record.seq == 0 ? nil : record.seq
    }

    public var record: PlayRecord {
        let result: PlayOutcome = switch outcome {
        case "completed": .completed(duration: .zero)
        case "failed": .failed(reason: reason ?? "")
        case "ended-early": .endedEarly(reason: reason ?? "")
        case "missed": .missed(reason: reason ?? "")
        case "held-back": .heldBack(reason: reason ?? "")
        case "alert": .alert(reason: reason ?? "")
        default: reason.map { .notPlayed(reason: $0) } ?? .stopped
        }
        return PlayRecord(entry: entry.queueEntry, startedAt: startedAt, outcome: result, seq: seq ?? 0)
    }
}
