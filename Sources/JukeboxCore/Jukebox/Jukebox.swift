import Logging
import ServiceLifecycle

/// The jukebox as its front ends see it (the application core, `core` where it is held): the
/// one place every front end (the control socket, the HTTP API and page, MQTT, SIGHUP) goes
/// through. It wires the catalog (the probed session, and the
/// `SessionEditor` for its file), the scheduler (`ClipJukebox`), the play queue
/// (`ClipPlayQueue`), the player with its output, and the state file. Commands are carried
/// out here, with their checks and limits; `StateChange.mustBeDurable` says which must be
/// on disk before they are acknowledged; `snapshot()` answers every question about the state
/// in one consistent reading; `events` is the one stream of what happens.
///
/// As a `Service` it runs the queue, the scheduler and the saving of the daemon's own
/// changes, and saves a last time once they have stopped.
///
/// One file per job: this one holds what the core is made of, and `JukeboxParts` wires
/// those parts together;
/// `Jukebox+Lifecycle` starts and stops it (the saved state put back, the services, autosave);
/// `Jukebox+Commands` has the commands and the snapshot; `Jukebox+Catalog` the session's edits and
/// uploads; `Jukebox+Reload` takes up a session read again or edited, one at a time; and
/// `Jukebox+Durability` holds the rule that a change is answered once it is on disk.
public actor Jukebox: Service {
    /// Reads the session again, for `reload` (the daemon applies its command-line overrides).
    public typealias SessionSource = @Sendable () async throws(SessionLoadError) -> Session
    public typealias SessionOverrides = SessionEditor.SessionOverrides
    /// Builds the output a session names, with its music bed when it has one (the daemon
    /// knows ALSA, Snapcast and the bed; tests pass their fake). What it builds opens nothing
    /// until the player takes it up.
    public typealias OutputFactory = @Sendable (OutputConfig, BedSettings?) -> AudioOutput

    /// The longest `client` name. It is copied into every entry it queues and into the state
    /// file, so without a bound a few requests could make the state file gigabytes long.
    public static let maxClientLength = 64
    public static let volumeRange = 0...100

    public struct Configuration: Sendable {
        public var queueLimit: Int
        public var generator: SeededGenerator
        /// The clocks and the zone every part keeps time by.
        public var time: TimeSource
        /// Where announcements' audio is kept; nil: beside the state file (and without a
        /// state file, `say` is refused).
        public var speechFolder: String?
        public var speechLimits: SpeechCache.Limits
        /// Converts clips' rates for outputs with a fixed one (Snapcast); the daemon's is libsoxr.
        public var makeRateConverter: RateConverterFactory?
        /// Measures clips' loudness for the session's `loudness` target; the daemon's is
        /// libebur128. nil: clips play as recorded.
        public var loudnessMeter: (any LoudnessMeter)?
        /// Reaches the players the session's `duck` lowers; the daemon's speaks MPD's protocol
        /// and snapserver's. nil: a session with `duck` lowers nothing.
        public var makeDuckTarget: DuckTargetFactory?
        /// Opens an ALSA device for a moment: a reload that names a device that is not there
        /// is refused. nil: not checked.
        public var checkDevice: DeviceChecker?
        /// Why a device name a client gave may not be opened (`ClientDeviceName`), or nil
        /// when it may; the daemon's follows ALSA's configuration. nil: a client may test
        /// only the session's own device.
        public var vetClientDevice: (@Sendable (_ device: String) async -> String?)?
        /// Fetches the calendars the session names by address; the daemon's speaks HTTP and
        /// HTTPS. nil: such a calendar is said to be unreadable.
        public var calendarFetcher: (any CalendarFetcher)?
        /// Where the calendars' last good copies are kept; nil: beside the state file
        /// (`STATE.calendars/`), or nowhere without one.
        public var calendarFolder: String?
        /// Fetches media by address (`playAddress`); the daemon's speaks HTTP and HTTPS.
        /// nil: such a request is refused.
        public var mediaFetcher: (any MediaFetcher)?

        public init(
            queueLimit: Int = ClipPlayQueue.defaultCapacity, generator: SeededGenerator = SeededGenerator(), time: TimeSource = .system,
            speechFolder: String? = nil, speechLimits: SpeechCache.Limits = SpeechCache.Limits(), makeRateConverter: RateConverterFactory? = nil,
            loudnessMeter: (any LoudnessMeter)? = nil, makeDuckTarget: DuckTargetFactory? = nil, checkDevice: DeviceChecker? = nil,
            vetClientDevice: (@Sendable (_ device: String) async -> String?)? = nil, calendarFetcher: (any CalendarFetcher)? = nil,
            calendarFolder: String? = nil, mediaFetcher: (any MediaFetcher)? = nil
        ) {
            self.mediaFetcher = mediaFetcher
            self.calendarFetcher = calendarFetcher
            self.calendarFolder = calendarFolder
            self.checkDevice = checkDevice
            self.vetClientDevice = vetClientDevice
            self.makeDuckTarget = makeDuckTarget
            self.loudnessMeter = loudnessMeter
            self.time = time
            self.makeRateConverter = makeRateConverter
            self.speechFolder = speechFolder
            self.speechLimits = speechLimits
            self.queueLimit = queueLimit
            self.generator = generator
        }
    }

    public nonisolated let events: EventBus
    let player: Player
    let queue: ClipPlayQueue
    /// The schedule in force, which the scheduler, the timetable, quiet hours, the volume
    /// and `plan` read; a reload replaces it in one step.
    let schedule: ScheduleBoard
    let scheduler: ClipJukebox
    /// Queues clips at their `at` times.
    let timetable: ClipTimetable
    /// Whether it is quiet now (the session's quiet hours, or by hand), and the release of
    /// requests held for the end of quiet.
    let quiet: QuietHours
    /// The volume: set by hand, by the session and by its schedule.
    let volume: VolumeControl
    /// Clips' measured loudness, and the gain that brings each to the session's target.
    let loudness: ClipLoudness
    /// The volume schedule has been given its starting level (`restoreState` or `run`).
    var volumeStarted = false
    let decoder: any ClipDecoder
    /// The session file's edits and the uploads' files.
    let editor: SessionEditor
    let stateFile: StateFile?
    /// nil: nothing is saved (tests, benchmarks).
    let writer: StateWriter?
    let loadSession: SessionSource
    /// Reloads and edits run one at a time (`lockSession`).
    var sessionBusy = false
    /// A sound test is running, or its device has not answered yet.
    var soundTestRunning = false
    /// Media by address being fetched now (`playAddress`), counted with what waits.
    var mediaFetches = 0
    var sessionWaiters: [CheckedContinuation<Void, Never>] = []
    let makeOutput: OutputFactory
    /// The daemon's clocks, for the front ends to keep time by too.
    public nonisolated var time: TimeSource { configuration.time }
    let configuration: Configuration
    let logger: Logger
    let startedAt: Double
    var catalog: ClipCatalog
    let hooks: HookRunner
    /// Lowers the other players while clips sound (`duck`).
    let ducker: Ducker
    let bedDucker: Ducker
    /// Makes announcements' audio; nil when there is nowhere to keep it.
    let speech: SpeechSynthesizer?
    /// Reads the session's calendars.
    let calendars: CalendarFeeds

    /// Builds the jukebox's parts (`JukeboxParts.wire`) and serves commands with them.
    public init(
        catalog: ClipCatalog, decoder: any ClipDecoder, converter: (any AudioConverter)? = nil, makeOutput: @escaping OutputFactory,
        stateFile: StateFile? = nil, loadSession: @escaping SessionSource, sessionOverrides: @escaping SessionOverrides = { $0 },
        configuration: Configuration = Configuration(), logger: Logger
    ) {
        let parts = JukeboxParts.wire(
            catalog: catalog, decoder: decoder, converter: converter, makeOutput: makeOutput, stateFile: stateFile, sessionOverrides: sessionOverrides,
            configuration: configuration, logger: logger)
        events = parts.events
        player = parts.player
        queue = parts.queue
        schedule = parts.schedule
        scheduler = parts.scheduler
        timetable = parts.timetable
        quiet = parts.quiet
        volume = parts.volume
        loudness = parts.loudness
        editor = parts.editor
        writer = parts.writer
        hooks = parts.hooks
        ducker = parts.ducker
        bedDucker = parts.bedDucker
        speech = parts.speech
        calendars = parts.calendars
        self.catalog = catalog
        self.decoder = decoder
        self.makeOutput = makeOutput
        self.loadSession = loadSession
        self.configuration = configuration
        self.logger = logger
        self.stateFile = stateFile
        startedAt = configuration.time.wallClock()
    }
}
