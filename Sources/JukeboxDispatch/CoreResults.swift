import JukeboxCore
import JukeboxProtocol

// How the core's results, errors and events look on the wire (docs/protocol.md). Nothing
// here decides anything: it only copies fields.

extension RPCError {
    /// jukeboxd's own errors, in the range JSON-RPC leaves to servers; the message is the core's.
    public init(_ error: JukeboxError) {
        let message = error.description
        switch error {
        case .unknownClip(let name, let suggestions):
            self.init(code: -32001, message: message, data: .init(reason: "unknown-clip", clip: name, suggestions: suggestions))
        case .queueFull:
            self.init(code: -32002, message: message, data: .init(reason: "queue-full"))
        case .outsideClipsDirectory(let path):
            self.init(code: -32003, message: message, data: .init(reason: "outside-clips-directory", clip: path))
        case .unplayable(let name, _):
            self.init(code: -32004, message: message, data: .init(reason: "unplayable-clip", clip: name))
        case .sessionInvalid(let problems):
            self.init(code: -32005, message: message, data: .init(reason: "session-invalid", problems: problems))
        case .stateNotSaved:
            self.init(code: -32006, message: message, data: .init(reason: "state-not-saved"))
        case .invalidParameter:
            self = .invalidParams(message)
        case .editInvalid(let problems):
            self.init(code: -32005, message: message, data: .init(reason: "session-invalid", problems: problems))
        case .sessionChangedOnDisk:
            self.init(code: -32007, message: message, data: .init(reason: "session-changed-on-disk"))
        case .revisionMismatch:
            self.init(code: -32008, message: message, data: .init(reason: "revision-mismatch"))
        case .sessionNotSaved:
            self.init(code: -32009, message: message, data: .init(reason: "session-not-saved"))
        case .uploadTooLarge:
            self.init(code: -32010, message: message, data: .init(reason: "upload-too-large"))
        case .uploadRefused:
            self.init(code: -32011, message: message, data: .init(reason: "upload-failed"))
        case .uploadsBusy:
            self.init(code: -32013, message: message, data: .init(reason: "uploads-busy"))
        case .soundTestFailed(let error):
            self.init(code: -32014, message: message, data: .init(reason: error.code.rawValue))
        case .deviceRefused:
            self.init(code: -32015, message: message, data: .init(reason: "device-refused"))
        case .soundTestBusy:
            self.init(code: -32016, message: message, data: .init(reason: "test-busy"))
        case .stopping:
            self.init(code: -32017, message: message, data: .init(reason: "stopping"))
        }
    }
}

extension EntryInfo {
    /// `ceiling`: the session's `maxVolume`, which holds an entry's own level when it plays.
    public init(_ entry: QueueEntry, position: Int? = nil, afterQuiet: Bool = false, ceiling: Double = 1) {
        // An alert's level is not held to the ceiling.
        let held: Double = entry.playing.aboveCeiling ? 1 : ceiling
        let volume: Int? = entry.playing.volume.map { Int((min($0, held) * Double(Jukebox.volumeRange.upperBound)).rounded()) }
        self.init(ticket: entry.ticket, clip: entry.clip.id, title: entry.clip.title, file: entry.clip.source.file,
                  origin: entry.origin.description, position: position, say: entry.clip.speech, afterQuiet: afterQuiet ? true : nil,
                  now: entry.urgent ? true : nil, resumeAt: entry.resumeAt?.seconds,
                  volume: volume, stopAfter: entry.playing.stopAfter?.secondsDouble, alert: entry.alert)
    }

    /// An entry just accepted: queued at `position`, or held until quiet ends (nil).
    public init(accepted entry: QueueEntry, position: Int?) {
        self.init(entry, position: position, afterQuiet: position == nil)
    }
}

extension QuietInfo {
    public init(_ status: QuietHours.Status, held: Int? = nil) {
        self.init(quiet: status.quiet, byHand: status.byHand, until: status.until.map(Double.init), held: held)
    }
}

extension StatusResult {
    public init(_ now: JukeboxSnapshot) {
        // Worked out apart: one expression of them all is more than Swift 6.2.3 type-checks in time.
        let calendars: [CalendarInfo]? = now.calendars.isEmpty ? nil : now.calendars.map { CalendarInfo($0) }
        let alert: AlertInfo? = now.queue.alert.map { AlertInfo($0) }
        self.init(
            session: now.session.name, device: now.player.deviceName, deviceState: now.deviceState.description,
            playing: now.playing.map { EntryInfo($0, ceiling: now.session.maxVolume) },
            waitingForDevice: now.waitingForDevice.map { EntryInfo($0, ceiling: now.session.maxVolume) },
            queueLength: now.queue.waiting.count, paused: now.queue.paused, volume: VolumeResult(now).volume,
            nextPick: now.nextPick, uptime: now.uptime, played: now.queue.played, failed: now.queue.failed,
            underruns: now.player.underruns, quiet: QuietInfo(now.quiet, held: now.queue.held.count), ducked: now.ducked.isEmpty ? nil : now.ducked,
            bed: now.player.bed.map(BedInfo.init), version: JukeboxVersion.current, plan: now.todayPlan.map(PlanDay.init),
            plans: now.session.dayPlans?.planNames,
            calendars: calendars, alert: alert, alerts: Self.alertNames(now.session))
    }

    /// The session's alerts' names; nil without alerts.
    static func alertNames(_ session: Session) -> [String]? {
        session.alerts.isEmpty ? nil : session.alerts.map(\.name)
    }
}

extension AlertInfo {
    public init(_ run: ClipPlayQueue.AlertRun) {
        self.init(name: run.name, since: run.since, by: run.by.name, soundings: run.soundings)
    }
}

extension BedInfo {
    public init(_ bed: MusicBedState) {
        self.init(pipe: bed.pipe, on: bed.on, music: bed.music.rawValue, ducked: bed.ducked, problem: bed.problem)
    }
}

extension QueueResult {
    public init(_ now: JukeboxSnapshot) {
        let position = now.position
        let ceiling = now.session.maxVolume
        let playing = now.playing.map { entry in
            PlayingInfo(
                entry: EntryInfo(entry, ceiling: ceiling), elapsed: position?.elapsed.secondsDouble, total: position?.total.secondsDouble,
                startedAt: now.queue.currentStartedAt, paused: now.queue.paused)
        }
        self.init(
            playing: playing, waitingForDevice: now.waitingForDevice.map { EntryInfo($0, ceiling: ceiling) },
            waiting: now.queue.waiting.enumerated().map { EntryInfo($1, position: $0 + 1, ceiling: ceiling) },
            held: now.queue.held.isEmpty ? nil : now.queue.held.map { EntryInfo($0, afterQuiet: true, ceiling: ceiling) })
    }
}

extension NextResult {
    public init(_ plan: JukeboxPlan, held: Int) {
        self.init(
            fixedTimes: plan.fixedTimes.map { FixedTimePlay(at: Double($0.moment), clip: $0.clip.id, title: $0.clip.title, quiet: $0.quiet ? true : nil, plan: $0.plan) },
            nextPick: plan.nextPick, pickSkipped: plan.pickSkipped ? true : nil, pickSkippedFor: plan.pickSkippedFor?.rawValue, nextPlay: plan.nextPlay, activeHours: plan.activeHours.map { ActiveHours(open: $0.open, until: $0.until.map(Double.init)) },
            quiet: QuietInfo(plan.quiet, held: held), quietHours: plan.quietHours.map { Span(from: Double($0.from), to: $0.to.map(Double.init)) },
            location: plan.location?.description, sun: plan.location == nil ? nil : plan.sun.map { SunTime(event: $0.event.description, time: $0.time) })
    }
}

extension ClipsResult {
    public init(_ now: JukeboxSnapshot) {
        self.init(clips: now.clips.map(ClipInfo.init))
    }
}

extension HistoryResult {
    public init(_ now: JukeboxSnapshot, limit: Int) {
        self.init(plays: now.history(limit: limit).map { record in
            PlayInfo(entry: EntryInfo(record.entry), startedAt: record.startedAt, outcome: record.outcome.name, reason: record.outcome.reason)
        })
    }
}

extension VolumeResult {
    public init(_ now: JukeboxSnapshot) { self.init(volume: now.volume) }
}

extension JukeboxEvent {
    /// The JSON-RPC notification line for this event.
    public var notificationLine: [UInt8] {
        let (method, params) = notification
        return RPCCoding.notification(method, params)
    }

    public var notification: (method: String, params: EventParams) {
        switch self {
        case .queued(let entry, let position): ("queued", EventParams(entry: EntryInfo(entry, position: position)))
        case .playing(let entry): ("playing", EventParams(entry: EntryInfo(entry)))
        case .finished(let play):
            ("finished", EventParams(entry: EntryInfo(play.entry), outcome: play.outcome.name, reason: play.outcome.reason))
        case .cut(let entry, let position): ("cut", EventParams(entry: EntryInfo(entry, position: position)))
        case .removed(let tickets): ("removed", EventParams(tickets: tickets))
        case .paused: ("paused", EventParams())
        case .resumed: ("resumed", EventParams())
        case .scheduled(let next): ("scheduled", EventParams(nextPick: next))
        case .device(let state): ("device", EventParams(state: state.description))
        case .sessionReloaded(let name, let clips): ("session", EventParams(session: name, clips: clips))
        case .volume(let level): ("volume", EventParams(volume: level))
        case .held(let entry): ("held", EventParams(entry: EntryInfo(entry, afterQuiet: true)))
        case .quiet(let status): ("quiet", EventParams(quiet: QuietInfo(status)))
        case .ducked(let players): ("ducked", EventParams(players: players))
        case .restored(let players): ("restored", EventParams(players: players))
        case .music(let on): ("bed", EventParams(state: on ? "on" : "off"))
        case .plans: ("plans", EventParams())
        case .alert(let run): ("alert", EventParams(state: run == nil ? "off" : "on", alert: run.map(AlertInfo.init)))
        }
    }
}

extension SessionResult {
    public init(document: SessionDocument, session: Session) {
        let windows = session.activeHours.map { window in
            "\(window.from)-\(window.to)" + (window.days.map { days in "@" + Weekday.allCases.filter(days.contains).map(\.description).joined(separator: ",") } ?? "")
        }
        let output: [String: String] = switch session.output {
        case .alsa(let device): ["type": "alsa", "device": device]
        case .snapcast(let pipe, let format): ["type": "snapcast", "pipe": pipe, "format": "\(format)"]
        }
        self.init(
            path: session.sourcePath, revision: session.revision, document: .object(document.fields),
            resolved: Resolved(
                name: session.name, clipsDirectory: session.clipsDirectory, output: output,
                interval: ["min": session.interval.lowerBound.secondsDouble, "max": session.interval.upperBound.secondsDouble],
                activeHours: windows, duration: session.duration?.secondsDouble, cue: session.cue?.file, volume: session.volume,
                leadIn: session.playback.leadIn.secondsDouble, fade: session.playback.fade.secondsDouble,
                keepDeviceOpen: session.playback.keepDeviceOpen.rawValue, maxUploadSize: session.maxUploadSize, clips: session.clips.count))
    }
}

extension EditResult {
    public init(_ edited: SessionEdited) {
        self.init(
            revision: edited.revision, clip: edited.clip.map(ClipInfo.init), fileDeleted: edited.fileKept != nil || edited.fileDeleted ? edited.fileDeleted : nil,
            fileKept: edited.fileKept)
    }
}

extension ClipInfo {
    public init(_ state: JukeboxSnapshot.ClipState) {
        self.init(
            id: state.clip.id, title: state.clip.title, file: state.clip.source.file, duration: state.duration?.secondsDouble,
            enabled: state.clip.enabled, windowOpen: state.windowOpen, timesPlayed: state.stats.timesPlayed,
            lastPlayed: state.stats.lastPlayed, problem: state.problem, randomPicks: state.clip.isShuffled ? nil : false)
    }
}

extension PlanDay {
    public init(_ day: DayPlan) {
        self.init(date: day.date.description, plan: day.choice?.plan, why: day.why, times: day.times.map { Time(at: $0.clock, clip: $0.clipID) })
    }
}

extension CalendarInfo {
    public init(_ state: CalendarFeeds.State) {
        self.init(name: state.name, source: state.source, readAt: state.readAt.map(Double.init), problem: state.problem, failures: state.failures)
    }
}
