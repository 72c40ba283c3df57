// The results of the control methods, shared by the daemon (which encodes them) and the
// `jukebox` client (which decodes them). Times are seconds since the Unix epoch.

public struct EntryInfo: Sendable, Equatable, Codable {
    public var ticket: UInt64
    public var clip: String
    public var title: String
    public var file: String
    /// `scheduler`, or the name a client gave.
    public var origin: String
    public var position: Int?
    /// An announcement's text (`say`); absent for a clip.
    public var say: String?
    /// true: held until quiet ends (`afterQuiet`), then queued; it has no position yet.
    public var afterQuiet: Bool?
    /// true: urgent (`now`); it cuts in ahead of everything that is not.
    public var now: Bool?
    /// Cut by an urgent entry: how far into the clip it goes on from, in seconds (0: from its
    /// start again).
    public var resumeAt: Double?
    /// The volume (0–100) it plays at in place of the volume, when it was asked for one.
    public var volume: Int?
    /// How many seconds of it play before it stops, when it was asked to stop early.
    public var stopAfter: Double?
    /// The alert it sounds for (a sounding, or the alert's end clip); absent for any other.
    public var alert: String?

    public init(
        ticket: UInt64, clip: String, title: String, file: String, origin: String, position: Int? = nil, say: String? = nil, afterQuiet: Bool? = nil,
        now: Bool? = nil, resumeAt: Double? = nil, volume: Int? = nil, stopAfter: Double? = nil, alert: String? = nil
    ) {
        self.alert = alert
        self.volume = volume
        self.stopAfter = stopAfter
        self.afterQuiet = afterQuiet
        self.now = now
        self.resumeAt = resumeAt
        self.say = say
        self.ticket = ticket
        self.clip = clip
        self.title = title
        self.file = file
        self.origin = origin
        self.position = position
    }
}

extension EntryInfo {
    /// How a person is shown the entry: the clip's id, or `say: ` and the text's first words.
    public var shown: String { say == nil ? clip : title }

    /// Who queued it, in words: `picked at random`, `at its time`, `from the web page`,
    /// `over MQTT`, `by Home Assistant's siren`, `by Home Assistant` (its media player), `sound test`, or `by pi` (a user of the
    /// `jukebox` command, or a name given with `--client`).
    public var queuedBy: String { Self.queuedBy(origin) }

    public static func queuedBy(_ origin: String) -> String {
        switch origin {
        case "scheduler": "picked at random"
        // "timetable" is how daemons before 0.2 named it.
        case "fixed-time", "timetable": "at its time"
        case "web": "from the web page"
        case "mqtt": "over MQTT"
        case "siren": "by Home Assistant's siren"
        case "home-assistant": "by Home Assistant"
        case "test": "sound test"
        default: "by \(origin)"
        }
    }
}

public struct EnqueueResult: Sendable, Equatable, Codable {
    public var entries: [EntryInfo]
    public init(entries: [EntryInfo]) { self.entries = entries }
}

public struct PlayingInfo: Sendable, Equatable, Codable {
    public var entry: EntryInfo
    public var elapsed: Double?
    public var total: Double?
    public var startedAt: Double?
    public var paused: Bool

    public init(entry: EntryInfo, elapsed: Double? = nil, total: Double? = nil, startedAt: Double? = nil, paused: Bool) {
        self.entry = entry
        self.elapsed = elapsed
        self.total = total
        self.startedAt = startedAt
        self.paused = paused
    }
}

public struct QueueResult: Sendable, Equatable, Codable {
    public var playing: PlayingInfo?
    /// The entry at the head of the queue while the audio device is missing: it plays as
    /// soon as the device is back. (`playing` is then absent.)
    public var waitingForDevice: EntryInfo?
    public var waiting: [EntryInfo]
    /// Requests held until quiet ends, in the order they will be queued.
    public var held: [EntryInfo]?

    public init(playing: PlayingInfo? = nil, waitingForDevice: EntryInfo? = nil, waiting: [EntryInfo], held: [EntryInfo]? = nil) {
        self.held = held
        self.playing = playing
        self.waitingForDevice = waitingForDevice
        self.waiting = waiting
    }
}

public struct StatusResult: Sendable, Equatable, Codable {
    public var session: String
    public var device: String
    public var deviceState: String
    public var playing: EntryInfo?
    /// The entry at the head of the queue while the audio device is missing.
    public var waitingForDevice: EntryInfo?
    public var queueLength: Int
    public var paused: Bool
    /// 0–100.
    public var volume: Int
    public var nextPick: Double?
    public var uptime: Double
    public var played: Int
    public var failed: Int
    /// Times the device ran dry and was restarted.
    public var underruns: Int?
    /// Whether it is quiet now.
    public var quiet: QuietInfo?
    /// The other players lowered or paused now (the session's `duck`), by name; absent when none.
    public var ducked: [String]?
    /// The music bed (the session's `bed`); absent without one.
    public var bed: BedInfo?
    /// Today's day plan (the session's `plans`); absent without plans.
    public var plan: PlanDay?
    /// The session's plans' names, in its order; absent without plans.
    public var plans: [String]?
    /// The day plans' calendars as last read; absent without calendars.
    public var calendars: [CalendarInfo]?
    /// The alert that is on; absent when none is.
    public var alert: AlertInfo?
    /// The session's alerts' names, in its order; absent without alerts.
    public var alerts: [String]?
    /// The daemon's version (`JukeboxVersion.current`): after an upgrade, the client's may differ
    /// until the service restarts.
    public var version: String?

    public init(session: String, device: String, deviceState: String, playing: EntryInfo? = nil, waitingForDevice: EntryInfo? = nil, queueLength: Int, paused: Bool, volume: Int, nextPick: Double? = nil, uptime: Double, played: Int, failed: Int, underruns: Int? = nil, quiet: QuietInfo? = nil, ducked: [String]? = nil, bed: BedInfo? = nil, version: String? = nil, plan: PlanDay? = nil, plans: [String]? = nil, calendars: [CalendarInfo]? = nil, alert: AlertInfo? = nil, alerts: [String]? = nil) {
        self.alert = alert
        self.alerts = alerts
        self.version = version
        self.plan = plan
        self.plans = plans
        self.calendars = calendars
        self.quiet = quiet
        self.bed = bed
        self.ducked = ducked
        self.session = session
        self.device = device
        self.deviceState = deviceState
        self.playing = playing
        self.waitingForDevice = waitingForDevice
        self.queueLength = queueLength
        self.paused = paused
        self.volume = volume
        self.nextPick = nextPick
        self.uptime = uptime
        self.played = played
        self.failed = failed
        self.underruns = underruns
    }
}

/// Whether it is quiet now (nothing the daemon starts by itself plays), why, and until when:
/// the `quiet` method's result, part of `status`, and the `quiet` event.
/// An alert that is on: part of `alert`'s answer and of `status`.
public struct AlertInfo: Sendable, Equatable, Codable {
    public var name: String
    /// Seconds since the epoch.
    public var since: Double
    /// Who started it: the client's name.
    public var by: String
    /// How many times it has begun to sound.
    public var soundings: Int

    public init(name: String, since: Double, by: String, soundings: Int) {
        self.name = name
        self.since = since
        self.by = by
        self.soundings = soundings
    }
}

/// The answer to `alert`: the alert on now (none: null), the one a start replaced or an end
/// ended, and the session's alerts.
public struct AlertResult: Sendable, Equatable, Codable {
    public var alert: AlertInfo?
    public var ended: AlertInfo?
    public var alerts: [String]

    public init(alert: AlertInfo?, ended: AlertInfo? = nil, alerts: [String]) {
        self.alert = alert
        self.ended = ended
        self.alerts = alerts
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: CodingKeys.self)
        // `alert` is always there: null when none is on.
        try fields.encode(alert, forKey: .alert)
        try fields.encodeIfPresent(ended, forKey: .ended)
        try fields.encode(alerts, forKey: .alerts)
    }
}

/// The answer to `health`: healthy, or the one reason it is not.
public struct HealthResult: Sendable, Equatable, Codable {
    public var healthy: Bool
    public var problem: String?
    /// The alert on now: healthy all the same.
    public var alert: String?

    public init(healthy: Bool, problem: String? = nil, alert: String? = nil) {
        self.healthy = healthy
        self.problem = problem
        self.alert = alert
    }
}

/// What `test` found: where the tone went, in what format, and how long the device took.
public struct SoundTestResult: Sendable, Equatable, Codable {
    public var device: String
    /// The format the device was opened for: `44100 Hz, s16, 2 channels`.
    public var format: String
    /// The device's own format, when ALSA converts to it.
    public var deviceFormat: String?
    public var seconds: Double
    public var took: Double
    /// Whether it took the audio at the rate a sound card plays it.
    public var realTime: Bool

    public init(device: String, format: String, deviceFormat: String? = nil, seconds: Double, took: Double, realTime: Bool) {
        self.device = device
        self.format = format
        self.deviceFormat = deviceFormat
        self.seconds = seconds
        self.took = took
        self.realTime = realTime
    }
}

/// The music bed: the answer to `bed`, and part of `status`.
public struct BedInfo: Sendable, Equatable, Codable {
    /// The FIFO the music comes in through.
    public var pipe: String
    /// Off: the music is muted (`bed off`); the clips play either way.
    public var on: Bool
    /// "playing", or "waiting" while nothing comes in through the pipe.
    public var music: String
    /// The music is lowered under a clip now.
    public var ducked: Bool
    /// Why the pipe cannot be read, when it cannot.
    public var problem: String?

    public init(pipe: String, on: Bool, music: String, ducked: Bool, problem: String? = nil) {
        self.pipe = pipe
        self.on = on
        self.music = music
        self.ducked = ducked
        self.problem = problem
    }
}

public struct QuietInfo: Sendable, Equatable, Codable {
    public var quiet: Bool
    /// Set by hand (`jukebox quiet`), rather than by the session's quiet hours.
    public var byHand: Bool
    /// When this changes next (seconds since the epoch); absent: not until someone changes it.
    public var until: Double?
    /// Requests held until quiet ends (absent from the `quiet` event: `held` and `queued`
    /// events tell each one).
    public var held: Int?

    public init(quiet: Bool, byHand: Bool, until: Double? = nil, held: Int? = nil) {
        self.quiet = quiet
        self.byHand = byHand
        self.until = until
        self.held = held
    }
}

/// What will happen next (`next`, `jukebox next`). Times are seconds since the epoch.
public struct NextResult: Sendable, Equatable, Codable {
    public struct FixedTimePlay: Sendable, Equatable, Codable {
        public var at: Double
        public var clip: String
        public var title: String
        /// true: it falls in quiet as things stand, and will be skipped.
        public var quiet: Bool?
        /// The day plan it is a time of; absent: the clip's own `at` time.
        public var plan: String?

        public init(at: Double, clip: String, title: String, quiet: Bool? = nil, plan: String? = nil) {
            self.at = at
            self.clip = clip
            self.title = title
            self.quiet = quiet
            self.plan = plan
        }
    }

    public struct Span: Sendable, Equatable, Codable {
        public var from: Double
        /// Absent: not within a week.
        public var to: Double?
        public init(from: Double, to: Double? = nil) {
            self.from = from
            self.to = to
        }
    }

    public struct ActiveHours: Sendable, Equatable, Codable {
        public var open: Bool
        /// When they open or shut next; absent: not within a week.
        public var until: Double?
        public init(open: Bool, until: Double? = nil) {
            self.open = open
            self.until = until
        }
    }

    public struct SunTime: Sendable, Equatable, Codable {
        /// `dawn`, `sunrise`, `sunset` or `dusk`.
        public var event: String
        /// Local `HH:MM`, or why there is none today.
        public var time: String
        public init(event: String, time: String) {
            self.event = event
            self.time = time
        }
    }

    /// The next fixed-time plays, within a week.
    public var fixedTimes: [FixedTimePlay]
    /// The scheduler's next random pick; absent while picks are held back.
    public var nextPick: Double?
    /// true: the next pick falls outside active hours or in quiet, so nothing is picked then.
    public var pickSkipped: Bool?
    /// Why: `quiet` or `active hours` (outside them); absent when the pick is not skipped.
    public var pickSkippedFor: String?
    /// When something next plays by itself: a fixed time not skipped for quiet, or a pick
    /// while active hours are open and it is not quiet.
    public var nextPlay: Double?
    /// The session's active hours; absent when it has none.
    public var activeHours: ActiveHours?
    public var quiet: QuietInfo
    /// The quiet hours in force now or next, within a week.
    public var quietHours: Span?
    /// `latitude,longitude`, when the session has a location.
    public var location: String?
    /// Today's sun times there.
    public var sun: [SunTime]?

    public init(
        fixedTimes: [FixedTimePlay], nextPick: Double? = nil, pickSkipped: Bool? = nil, pickSkippedFor: String? = nil, nextPlay: Double? = nil, activeHours: ActiveHours? = nil, quiet: QuietInfo,
        quietHours: Span? = nil, location: String? = nil, sun: [SunTime]? = nil
    ) {
        self.fixedTimes = fixedTimes
        self.nextPick = nextPick
        self.pickSkipped = pickSkipped
        self.pickSkippedFor = pickSkippedFor
        self.nextPlay = nextPlay
        self.activeHours = activeHours
        self.quiet = quiet
        self.quietHours = quietHours
        self.location = location
        self.sun = sun
    }
}

public struct ClipInfo: Sendable, Equatable, Codable {
    public var id: String
    public var title: String
    public var file: String
    public var duration: Double?
    public var enabled: Bool
    public var windowOpen: Bool
    public var timesPlayed: Int
    public var lastPlayed: Double?
    /// Why the clip cannot be played (missing, corrupt…), or nil.
    public var problem: String?
    /// false for a clip the scheduler never picks at random (one with `at` times and no
    /// `weight`): it plays only at its times. nil: it is picked.
    public var randomPicks: Bool?

    public init(
        id: String, title: String, file: String, duration: Double? = nil, enabled: Bool, windowOpen: Bool, timesPlayed: Int, lastPlayed: Double? = nil,
        problem: String? = nil, randomPicks: Bool? = nil
    ) {
        self.randomPicks = randomPicks
        self.id = id
        self.title = title
        self.file = file
        self.duration = duration
        self.enabled = enabled
        self.windowOpen = windowOpen
        self.timesPlayed = timesPlayed
        self.lastPlayed = lastPlayed
        self.problem = problem
    }
}

public struct ClipsResult: Sendable, Equatable, Codable {
    public var clips: [ClipInfo]

    public init(clips: [ClipInfo]) {
        self.clips = clips
    }
}

public struct PlayInfo: Sendable, Equatable, Codable {
    public var entry: EntryInfo
    public var startedAt: Double
    /// `completed`, `skipped` or `failed`.
    public var outcome: String
    public var reason: String?

    public init(entry: EntryInfo, startedAt: Double, outcome: String, reason: String? = nil) {
        self.entry = entry
        self.startedAt = startedAt
        self.outcome = outcome
        self.reason = reason
    }
}

public struct HistoryResult: Sendable, Equatable, Codable {
    public var plays: [PlayInfo]

    public init(plays: [PlayInfo]) {
        self.plays = plays
    }
}

public struct RemoveResult: Sendable, Equatable, Codable {
    public var removed: [UInt64]
    public var notWaiting: [UInt64]

    public init(removed: [UInt64], notWaiting: [UInt64]) {
        self.removed = removed
        self.notWaiting = notWaiting
    }
}

/// What `stop` ended: the waiting entries dropped, and the clip skipped, if any.
public struct StopResult: Sendable, Equatable, Codable {
    public var removed: [UInt64]
    public var skipped: EntryInfo?

    public init(removed: [UInt64], skipped: EntryInfo? = nil) {
        self.removed = removed
        self.skipped = skipped
    }
}

public struct SkipResult: Sendable, Equatable, Codable {
    public var skipped: EntryInfo?

    public init(skipped: EntryInfo? = nil) {
        self.skipped = skipped
    }
}

public struct PauseResult: Sendable, Equatable, Codable {
    public var paused: Bool

    public init(paused: Bool) {
        self.paused = paused
    }
}

public struct PickResult: Sendable, Equatable, Codable {
    public var entry: EntryInfo?

    public init(entry: EntryInfo? = nil) {
        self.entry = entry
    }
}

public struct VolumeResult: Sendable, Equatable, Codable {
    public var volume: Int

    public init(volume: Int) {
        self.volume = volume
    }
}

public struct ReloadResult: Sendable, Equatable, Codable {
    public var session: String
    public var clips: Int

    public init(session: String, clips: Int) {
        self.session = session
        self.clips = clips
    }
}

public struct SubscribeResult: Sendable, Equatable, Codable {
    public var subscribed: Bool

    public init(subscribed: Bool) {
        self.subscribed = subscribed
    }
}

/// `session`: the session file as the daemon read it, its revision, and the session with
/// every default resolved (durations in seconds).
public struct SessionResult: Sendable, Equatable, Codable {
    public struct Resolved: Sendable, Equatable, Codable {
        public var name: String
        public var clipsDirectory: String
        public var output: [String: String]
        public var interval: [String: Double]
        /// `HH:MM-HH:MM`, with `@days` when the window has days; empty means always.
        public var activeHours: [String]
        public var duration: Double?
        public var cue: String?
        public var volume: Double
        public var leadIn: Double
        public var fade: Double
        public var keepDeviceOpen: String
        public var maxUploadSize: Int
        public var clips: Int

        public init(
            name: String, clipsDirectory: String, output: [String: String], interval: [String: Double], activeHours: [String],
            duration: Double?, cue: String?, volume: Double, leadIn: Double, fade: Double, keepDeviceOpen: String, maxUploadSize: Int, clips: Int
        ) {
            self.name = name
            self.clipsDirectory = clipsDirectory
            self.output = output
            self.interval = interval
            self.activeHours = activeHours
            self.duration = duration
            self.cue = cue
            self.volume = volume
            self.leadIn = leadIn
            self.fade = fade
            self.keepDeviceOpen = keepDeviceOpen
            self.maxUploadSize = maxUploadSize
            self.clips = clips
        }
    }

    public var path: String
    public var revision: String
    public var document: JSONValue
    public var resolved: Resolved

    public init(path: String, revision: String, document: JSONValue, resolved: Resolved) {
        self.path = path
        self.revision = revision
        self.document = document
        self.resolved = resolved
    }
}

/// `addClip`, `updateClip`, `removeClip`, `updateSchedule`: the session's new revision, the
/// clip as `clips` shows it (not after a removal), and for `removeClip` with `deleteFile`
/// whether the file was deleted or why it was kept.
public struct EditResult: Sendable, Equatable, Codable {
    public var revision: String
    public var clip: ClipInfo?
    public var fileDeleted: Bool?
    public var fileKept: String?

    public init(revision: String, clip: ClipInfo? = nil, fileDeleted: Bool? = nil, fileKept: String? = nil) {
        self.revision = revision
        self.clip = clip
        self.fileDeleted = fileDeleted
        self.fileKept = fileKept
    }
}

/// `upload`: the upload's id, for `addClip`, and how many raw bytes to send now.
public struct UploadResult: Sendable, Equatable, Codable {
    public var upload: String
    public var size: Int

    public init(upload: String, size: Int) {
        self.upload = upload
        self.size = size
    }
}

/// `webCA` (`jukebox web-ca`): the certificate authority the web remote made, which a phone
/// trusts once to reach it over HTTPS, and the server certificate it signed. Times are
/// seconds since the epoch.
public struct WebCAResult: Sendable, Equatable, Codable {
    /// Where `ca.crt` is on the daemon's machine (the page also serves it at `/ca.crt`).
    public var path: String
    /// SHA-256 of the authority's certificate, `AB:CD:…`, as phones show it.
    public var fingerprint: String
    public var notAfter: Double
    /// The names and addresses the server certificate is for.
    public var serverNames: String
    public var serverNotAfter: Double
    /// Set when this authority replaced one whose files could not be used (kept aside): what
    /// happened, and that every phone must trust the new one.
    public var replaced: String?

    public init(path: String, fingerprint: String, notAfter: Double, serverNames: String, serverNotAfter: Double, replaced: String? = nil) {
        self.path = path
        self.fingerprint = fingerprint
        self.notAfter = notAfter
        self.serverNames = serverNames
        self.serverNotAfter = serverNotAfter
        self.replaced = replaced
    }
}

/// `loudness` (`jukebox loudness`): each clip's measured loudness and the gain that brings it
/// to the session's `loudness` target.
public struct LoudnessResult: Sendable, Equatable, Codable {
    public struct Figure: Sendable, Equatable, Codable {
        public var clip: String
        public var file: String
        /// Integrated loudness, LUFS; absent before the clip is measured, or for silence.
        public var integrated: Double?
        /// The highest true peak, dBTP; absent before the clip is measured.
        public var truePeak: Double?
        /// The gain applied to reach the target, dB (the clip's own `gain` comes on top);
        /// absent without a target or before the clip is measured.
        public var gain: Double?
        /// false: not measured yet (or its file could not be read).
        public var measured: Bool

        public init(clip: String, file: String, integrated: Double? = nil, truePeak: Double? = nil, gain: Double? = nil, measured: Bool) {
            self.clip = clip
            self.file = file
            self.integrated = integrated
            self.truePeak = truePeak
            self.gain = gain
            self.measured = measured
        }
    }

    /// The session's `loudness`, LUFS; absent: clips play as recorded.
    public var target: Double?
    public var clips: [Figure]

    public init(target: Double?, clips: [Figure]) {
        self.target = target
        self.clips = clips
    }
}

/// A date's day plan (`plan`, `setPlan`, `jukebox plan --json`): exactly `{"date":
/// "YYYY-MM-DD", "plan": NAME or null, "why": TEXT, "times": [{"at": "HH:MM", "clip": ID}]}`.
public struct PlanDay: Sendable, Equatable, Codable {
    public struct Time: Sendable, Equatable, Codable {
        /// Local `HH:MM`, where jukeboxd is.
        public var at: String
        public var clip: String

        public init(at: String, clip: String) {
            self.at = at
            self.clip = clip
        }
    }

    public var date: String
    /// nil (written as null): no plan, and no plan times that day.
    public var plan: String?
    /// `calendar school: Late start`, `days rule 1 (mon-fri)`, `set by hand (pi, 2026-11-28
    /// 07:40)` or `no rule matches`.
    public var why: String
    public var times: [Time]

    public init(date: String, plan: String?, why: String, times: [Time] = []) {
        self.date = date
        self.plan = plan
        self.why = why
        self.times = times
    }

    enum CodingKeys: String, CodingKey { case date, plan, why, times }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(date, forKey: .date)
        try container.encode(plan, forKey: .plan)
        try container.encode(why, forKey: .why)
        try container.encode(times, forKey: .times)
    }
}

/// The day plans of the coming days (`plan`): a list of `PlanDay`, earliest first.
public struct PlanResult: Sendable, Equatable, Codable {
    public var days: [PlanDay]

    public init(days: [PlanDay]) { self.days = days }

    public init(from decoder: any Decoder) throws { days = try decoder.singleValueContainer().decode([PlanDay].self) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(days)
    }
}

/// A calendar of the session's day plans as last read (`status`).
public struct CalendarInfo: Sendable, Equatable, Codable {
    public var name: String
    public var source: String
    /// When a good copy was last read or found unchanged (seconds since the epoch); absent:
    /// not yet since the start.
    public var readAt: Double?
    /// Why the last read failed, while it does; the last good copy is used meanwhile.
    public var problem: String?
    /// Reads that failed since the start.
    public var failures: Int

    public init(name: String, source: String, readAt: Double? = nil, problem: String? = nil, failures: Int = 0) {
        self.name = name
        self.source = source
        self.readAt = readAt
        self.problem = problem
        self.failures = failures
    }
}
