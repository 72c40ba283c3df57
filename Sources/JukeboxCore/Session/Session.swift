/// A validated session: everything `jukeboxd` needs to run, with defaults filled in and
/// every path made absolute. Produced by `SessionLoader`; never built from unchecked input.
public struct Session: Sendable, Equatable {
    public var name: String
    /// The session file as the user named it; error messages use this spelling.
    public var sourcePath: String
    public var clipsDirectory: String
    /// Where clips are played (`output`, or the `device` shorthand).
    public var output: OutputConfig
    public var interval: ClosedRange<Duration>
    /// Empty means always active.
    public var activeHours: [TimeWindow]
    /// nil means run until stopped.
    public var duration: Duration?
    public var cue: ClipSource?
    /// Master volume, 0...1. With a volume schedule, the level the first step gives.
    public var volume: Double
    /// The volume by time of day (`volume` as a list of steps); empty: `volume` all day.
    public var volumeSchedule: [VolumeStep] = []
    /// The highest volume any front end may set, 0...1 (`maxVolume`).
    public var maxVolume: Double = 1
    /// The loudness every clip is brought to, in LUFS (`loudness`); nil: clips play as
    /// recorded. A clip's own `gain` applies on top.
    public var loudness: Double?
    /// What `loudness` may be: from a whisper to as loud as a master for streaming gets.
    public static let loudnessRange = -40.0 ... -5.0
    /// Lead-in, fades and what to do with the device between clips.
    public var playback: PlaybackOptions
    public var clips: [Clip]
    /// The web remote and HTTP API (`http`); nil: off.
    public var web: WebSettings?
    /// MQTT and Home Assistant discovery (`mqtt`); nil: off.
    public var mqtt: MQTTSettings?
    /// Home Assistant's media player over ESPHome's native API (`esphome`); nil: off.
    public var esphome: ESPHomeSettings?
    /// Programs run around playback (`hooks`).
    public var hooks: Hooks
    /// The speech engine for `say` (`tts`).
    public var speech: SpeechSettings
    /// The largest clip file an upload may bring, in bytes.
    public var maxUploadSize: Int
    /// The longest clip an upload may bring (`maxUploadLength`).
    public var maxUploadLength: Duration
    /// Where sun times are worked out for (`location`); nil when none is used.
    public var location: GeoLocation?
    /// Dates excluded wherever `except` names `"holidays"`.
    public var holidays: [DateRule]
    /// Windows in which nothing the daemon starts by itself plays (`quiet`): no random picks
    /// and no `at` times. What a client queues still plays.
    public var quiet: [TimeWindow] = []
    /// How late an `at` time may still be played after a short outage (`atGrace`).
    public var atGrace: Duration = Session.defaultAtGrace
    /// What becomes of a clip an urgent one cuts (`afterCut`).
    public var afterCut: AfterCut = .resume
    /// What becomes of a fixed time that passed longer than `atGrace` ago unplayed (`missed`,
    /// `playLateWithin`).
    public var missed: MissedTimes = .skip
    /// Other players lowered while a clip sounds (`duck`); nil: none.
    public var duck: DuckSettings?
    /// Music played under the clips through the output (`bed`); nil: none.
    public var bed: BedSettings?
    /// Bell schedules by the day (`plans`, `days`, `calendars`); nil: none.
    public var dayPlans: DayPlans?
    /// Alerts a person can start (`alerts`), in the file's order; empty: none.
    public var alerts: [AlertSettings] = []
    /// A fingerprint of the file's bytes as read (`SessionDocument.revision(of:)`); empty for
    /// a session made in code.
    public var revision: String

    public static let defaultInterval: ClosedRange<Duration> = .seconds(600) ... .seconds(1800)
    public static let defaultAtGrace: Duration = .seconds(120)
    /// `playLateWithin`: an hour unless set, from a minute to a week.
    public static let defaultPlayLateWithin: Duration = .seconds(3600)
    public static let playLateWithinRange: ClosedRange<Duration> = .seconds(60) ... .seconds(7 * 86_400)

    /// What a siren turned on without a tone plays (Home Assistant's): the first enabled clip,
    /// the first of the tones it is offered.
    public var defaultTone: Clip? { clips.first(where: \.enabled) }

    /// How late a fixed time may still start, and when it is missed: `atGrace`, `missed`
    /// and `playLateWithin` as one rule.
    public var grace: StartGrace { StartGrace(onTime: atGrace, missed: missed) }
    /// `atGrace` may be set from 0 s to an hour.
    public static let atGraceRange: ClosedRange<Duration> = .zero ... .seconds(3600)
    public static let defaultMaxUploadSize = 50 << 20
    /// `maxUploadSize` may be set from 1 KiB to 2 GiB.
    public static let maxUploadSizeRange = 1024...(2 << 30)
    /// Reminders and announcements are short; a longer recording needs the session to say so.
    public static let defaultMaxUploadLength: Duration = .seconds(600)
    /// `maxUploadLength` may be set from 1 s to 3 h.
    public static let maxUploadLengthRange: ClosedRange<Duration> = .seconds(1) ... .seconds(3 * 3600)

    public init(
        name: String, sourcePath: String, clipsDirectory: String, output: OutputConfig = .alsa(device: "default"),
        interval: ClosedRange<Duration> = Session.defaultInterval, activeHours: [TimeWindow] = [],
        duration: Duration? = nil, cue: ClipSource? = nil, volume: Double = 1,
        playback: PlaybackOptions = PlaybackOptions(), clips: [Clip], maxUploadSize: Int = Session.defaultMaxUploadSize,
        maxUploadLength: Duration = Session.defaultMaxUploadLength,
        revision: String = "", web: WebSettings? = nil, mqtt: MQTTSettings? = nil, hooks: Hooks = Hooks(),
        speech: SpeechSettings = SpeechSettings(), location: GeoLocation? = nil, holidays: [DateRule] = [],
        atGrace: Duration = Session.defaultAtGrace, quiet: [TimeWindow] = []
    ) {
        self.quiet = quiet
        self.atGrace = atGrace
        self.location = location
        self.holidays = holidays
        self.hooks = hooks
        self.speech = speech
        self.web = web
        self.mqtt = mqtt
        self.maxUploadSize = maxUploadSize
        self.maxUploadLength = maxUploadLength
        self.revision = revision
        self.name = name
        self.sourcePath = sourcePath
        self.clipsDirectory = clipsDirectory
        self.output = output
        self.interval = interval
        self.activeHours = activeHours
        self.duration = duration
        self.cue = cue
        self.volume = volume
        self.playback = playback
        self.clips = clips
    }

    public func clip(id: String) -> Clip? { clips.first { $0.id == id } }

    /// Whether `time` falls in the session's quiet hours.
    public func isQuiet(_ time: LocalTime) -> Bool {
        quiet.contains { $0.contains(time, location: location, holidays: holidays) }
    }

    /// The sun's moments the session's times are anchored on, in the day's order.
    public var sunEventsUsed: [SunEvent] {
        let windows = activeHours + quiet + clips.flatMap(\.windows)
        var used = Set(windows.flatMap { [$0.from.sunEvent, $0.to.sunEvent] }.compactMap { $0 })
        used.formUnion(clips.flatMap(\.at).compactMap(\.sunEvent))
        used.formUnion(volumeSchedule.compactMap(\.from.sunEvent))
        let planEntries: [DayPlans.Entry] = dayPlans?.plans.flatMap(\.entries) ?? []
        used.formUnion(planEntries.compactMap(\.time.sunEvent))
        return SunEvent.allCases.filter(used.contains)
    }

    /// The output as people name it: the ALSA device, for now.
    public var deviceName: String { output.description }
}

/// A session clip as configured.
