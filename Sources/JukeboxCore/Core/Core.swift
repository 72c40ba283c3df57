import Logging
import ServiceLifecycle

/// The application core: the one place every front end (the control socket, the HTTP API and
/// page, MQTT, SIGHUP) goes through. It wires the catalog (the probed session, and the
/// `SessionEditor` for its file), the scheduler (`ClipJukebox`), the play queue
/// (`ClipPlayQueue`), the player with its output, and the state file. Commands are carried
/// out here, with their checks and limits; `JukeboxCommand.mustBeDurable` says which must be
/// on disk before they are acknowledged; `snapshot()` answers every question about the state
/// in one consistent reading; `events` is the one stream of what happens.
///
/// As a `Service` it runs the queue, the scheduler and the saving of the daemon's own
/// changes, and saves a last time once they have stopped.
public actor Core: Service {
    /// Reads the session again, for `reload` (the daemon applies its command-line overrides).
    public typealias SessionSource = @Sendable () async throws(SessionLoadError) -> Session
    public typealias SessionOverrides = SessionEditor.SessionOverrides
    /// Builds an output from the session's configuration (the daemon knows ALSA; tests pass
    /// their fake).
    public typealias SinkFactory = @Sendable (OutputConfig) -> any AudioSink

    /// The longest `client` name. It is copied into every entry it queues and into the state
    /// file, so without a bound a few requests could make the state file gigabytes long.
    public static let maxClientLength = 64
    public static let volumeRange = 0...100

    public struct Configuration: Sendable {
        public var queueLimit: Int
        public var generator: SeededGenerator
        /// Measures gaps, retries and idle times.
        public var clock: any Clock<Duration>
        public var wallClock: WallClock
        public var localTime: any LocalTimeSource
        /// The zone `at` times are worked out in.
        public var zone: any LocalZone
        /// Where announcements' audio is kept; nil: beside the state file (and without a
        /// state file, `say` is refused).
        public var speechFolder: String?
        public var speechLimits: SpeechCache.Limits
        /// Converts clips' rates for outputs with a fixed one (Snapcast); the daemon's is libsoxr.
        public var makeRateConverter: RateConverterFactory?
        /// Measures clips' loudness for the session's `loudness` target; the daemon's is
        /// libebur128. nil: clips play as recorded.
        public var loudnessMeter: (any LoudnessMeter)?

        public init(
            queueLimit: Int = ClipPlayQueue.defaultCapacity, generator: SeededGenerator = SeededGenerator(),
            clock: any Clock<Duration> = ContinuousClock(), wallClock: @escaping WallClock = SystemWallClock.now,
            localTime: any LocalTimeSource = SystemLocalTime(), speechFolder: String? = nil,
            speechLimits: SpeechCache.Limits = SpeechCache.Limits(), makeRateConverter: RateConverterFactory? = nil,
            zone: any LocalZone = SystemLocalTime(), loudnessMeter: (any LoudnessMeter)? = nil
        ) {
            self.loudnessMeter = loudnessMeter
            self.zone = zone
            self.makeRateConverter = makeRateConverter
            self.speechFolder = speechFolder
            self.speechLimits = speechLimits
            self.queueLimit = queueLimit
            self.generator = generator
            self.clock = clock
            self.wallClock = wallClock
            self.localTime = localTime
        }
    }

    public nonisolated let events: EventBus
    /// The web remote's certificate, as its server last published it.
    public nonisolated let webCertificate = WebCertificateBoard()
    let player: Player
    let queue: ClipPlayQueue
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
    private var volumeStarted = false
    let decoder: any ClipDecoder
    /// The session file's edits and the uploads' files.
    let editor: SessionEditor
    private let stateFile: StateFile?
    /// nil: nothing is saved (tests, benchmarks).
    private let writer: StateWriter?
    private let loadSession: SessionSource
    /// Reloads and edits run one at a time (`lockSession`).
    private var sessionBusy = false
    private var sessionWaiters: [CheckedContinuation<Void, Never>] = []
    private let makeSink: SinkFactory
    let configuration: Configuration
    let logger: Logger
    private let startedAt: Double
    private var catalog: ClipCatalog
    /// The output in use, watched for calls that never return (`outputStall`). The player
    /// plays through it by way of the conversion stage (`ConvertingSink`).
    private var output: WatchedSink
    let hooks: HookRunner
    /// Makes announcements' audio; nil when there is nowhere to keep it.
    let speech: SpeechSynthesizer?

    public init(
        catalog: ClipCatalog, decoder: any ClipDecoder, converter: (any AudioConverter)? = nil, makeSink: @escaping SinkFactory,
        stateFile: StateFile? = nil, loadSession: @escaping SessionSource, sessionOverrides: @escaping SessionOverrides = { $0 },
        configuration: Configuration = Configuration(), logger: Logger
    ) {
        self.editor = SessionEditor(decoder: decoder, converter: converter, sessionOverrides: sessionOverrides, logger: logger)
        let session = catalog.session
        let events = EventBus()
        let output = WatchedSink(makeSink(session.output))
        let loudness = ClipLoudness(
            meter: configuration.loudnessMeter, decoder: decoder, file: stateFile.map { ClipLoudness.file(besideState: $0.path) }, logger: logger)
        self.loudness = loudness
        let player = Player(
            sink: ConvertingSink(output, makeRateConverter: configuration.makeRateConverter), decoder: decoder, clock: configuration.clock, volume: session.volume, options: session.playback,
            events: events, loudness: loudness, logger: logger)
        let hooks = HookRunner(session.hooks, logger: logger)
        let speech = (configuration.speechFolder ?? stateFile.map { SpeechCache.folder(besideState: $0.path) }).map { folder in
            SpeechSynthesizer(
                settings: session.speech, cache: SpeechCache(folder: folder, limits: configuration.speechLimits), decoder: decoder,
                logger: logger)
        }
        let queue = ClipPlayQueue(
            player: player, events: events, clock: configuration.clock, wallClock: configuration.wallClock,
            capacity: configuration.queueLimit, logger: logger,
            beforePlaying: { entry in await hooks.run(.beforePlaying, entry: entry) },
            afterPlaying: { entry, outcome in await hooks.run(.afterPlaying, entry: entry, outcome: outcome) },
            prepare: { clip in
                guard let speech else { throw SpeechFailure("announcements are off: there is no state folder to keep their audio in") }
                return try await speech.audio(for: clip)
            })
        self.hooks = hooks
        self.speech = speech
        self.events = events
        self.output = output
        self.player = player
        self.queue = queue
        let quiet = QuietHours(
            session: session, queue: queue, events: events, clock: configuration.clock, wallClock: configuration.wallClock,
            zone: configuration.zone, logger: logger)
        self.quiet = quiet
        let volume = VolumeControl(
            session: session, player: player, events: events, clock: configuration.clock, wallClock: configuration.wallClock,
            zone: configuration.zone, logger: logger)
        self.volume = volume
        let scheduler = ClipJukebox(
            session: session, clips: catalog.playableClips, queue: queue, quiet: quiet, events: events, clock: configuration.clock,
            localTime: configuration.localTime, generator: configuration.generator, wallClock: configuration.wallClock,
            logger: logger)
        self.scheduler = scheduler
        let timetable = ClipTimetable(
            session: session, clips: catalog.playableClips, queue: queue, quiet: quiet, clock: configuration.clock,
            wallClock: configuration.wallClock, zone: configuration.zone, logger: logger)
        self.timetable = timetable
        self.catalog = catalog
        self.decoder = decoder
        self.makeSink = makeSink
        self.loadSession = loadSession
        self.configuration = configuration
        self.logger = logger
        self.startedAt = configuration.wallClock()
        self.stateFile = stateFile
        if stateFile != nil { events.holdUntilSaved() }
        self.writer = stateFile.map { file in
            StateWriter(file: file, outbox: events) { [queue, scheduler, timetable, quiet, volume, player] in
                await PersistedState.gather(
                    queue: queue, scheduler: scheduler, timetable: timetable, quiet: quiet, volume: volume, player: player)
            }
        }
    }

    // MARK: - Start and stop

    /// Puts back the saved queue, bag, volume and pause, and logs what happened. Call once,
    /// before `run()`.
    public func restoreState() async {
        guard let stateFile, let writer else { return }
        await queue.setRiskyStartHook { [logger] in
            do { try await writer.save() } catch { logger.error("\(error)") }
        }
        await volume.setChangeHook { [logger] in
            do { try await writer.save() } catch { logger.error("\(error)") }
        }
        switch await stateFile.load(now: configuration.wallClock()) {
        case .missing:
            logger.info("no saved state at \(stateFile.path); starting with an empty queue")
        case .corrupt(let movedTo, let reason):
            logger.warning("state file \(stateFile.path) could not be used (\(reason)); kept it as \(movedTo) and started with an empty queue")
        case .unusable(let reason):
            // Saving now would overwrite a file that may still hold someone's queue.
            logger.error("state file \(stateFile.path) could not be used, and was not moved aside: \(reason); started with an empty queue and will not save until it is moved away or the folder is fixed, then restarted")
            await writer.hold(reason: "\(stateFile.path) could not be read or moved aside (\(reason))")
        case .loaded(let saved):
            let session = catalog.session
            let (state, refused) = saved.confined(to: session, now: configuration.wallClock())
            for entry in refused {
                let what = entry.clip.say != nil
                    ? "is an announcement whose text is not valid"
                    : "names \(entry.clip.path), outside the clips folder \(session.clipsDirectory)"
                logger.warning("state file \(stateFile.path): ticket \(entry.ticket) \(what); not queued", metadata: ["ticket": "\(entry.ticket)"])
            }
            // A clip queued at its fixed time that did not start before the daemon stopped is
            // not played late.
            let now = configuration.wallClock(), grace = session.atGrace.secondsDouble
            var waiting: [PersistedState.Entry] = [], held: [PersistedState.Entry] = []
            for entry in state.waiting {
                if entry.afterQuiet == true {
                    held.append(entry)
                    continue
                }
                guard entry.isLate(now: now, grace: grace) else {
                    waiting.append(entry)
                    continue
                }
                logger.notice("missed \(entry.clip.id), queued at its fixed time before jukeboxd stopped: it is longer ago than atGrace (\(DurationText.format(session.atGrace))); not played late", metadata: ["clip": "\(entry.clip.id)"])
            }
            await queue.restore(
                entries: waiting.map(\.queueEntry), held: held.map(\.queueEntry), nextTicket: state.nextTicket, stats: state.stats,
                history: state.history.map(\.record), started: state.started, paused: state.paused)
            if let bag = state.bag { await scheduler.restoreBag(bag) }
            await quiet.restore(state.quiet)
            if let until = state.timetableUntil { await timetable.restore(handledUntil: until) }
            await volume.start(saved: (state.volume, state.volumeStepAt))
            volumeStarted = true
            // Announcements whose audio is not kept any more are made again, ahead of their turn.
            for entry in waiting { if let text = entry.clip.say { await speech?.prepare(text) } }
            let heldNote = held.isEmpty ? "" : " and \(Plural.count(held.count, "request")) held until quiet ends"
            logger.info("restored \(Plural.count(waiting.count, "queued clip"))\(heldNote)\(state.paused ? ", paused" : "") from \(stateFile.path)")
        }
    }

    public func run() async throws {
        await queue.setFixedTimeGrace(catalog.session.atGrace)
        await loudness.adopt(target: session.loudness, sources: Self.loudnessSources(catalog))
        if !volumeStarted {
            // Nothing saved: the volume schedule's step in force, if there is one.
            await volume.start(saved: nil)
            volumeStarted = true
        }
        let (queue, scheduler, timetable, quiet, volume) = (queue, scheduler, timetable, quiet, volume)
        await withTaskGroup(of: Bool.self) { tasks in
            tasks.addTask { try? await queue.run(); return false }
            tasks.addTask { try? await quiet.run(); return false }
            tasks.addTask { try? await volume.run(); return false }
            tasks.addTask { try? await scheduler.run(); return true }
            tasks.addTask { try? await timetable.run(); return false }
            if let speech { tasks.addTask { await speech.run(); return false } }
            // The idle hook, once the device has been released after playing.
            let deviceChanges = events.watch()
            tasks.addTask { [hooks] in
                await cancelWhenGracefulShutdown {
                    for await event in deviceChanges {
                        if case .device(.closed) = event { await hooks.run(.idle) }
                    }
                }
                return false
            }
            if let writer {
                // Subscribed before the queue or the scheduler can change anything.
                let changes = events.watch()
                tasks.addTask { await self.save(changes, with: writer); return false }
            }
            // The scheduler returns at the session's end, once the last clip has finished,
            // and on shutdown; either way everything stops.
            for await schedulerEnded in tasks where schedulerEnded { break }
            tasks.cancelAll()
        }
        // The last word: how the last clip ended, cut short (it stays first and plays again
        // after a restart) or finished as the shutdown began (it counts as played).
        if let writer {
            do { try await writer.save() } catch { logger.error("\(error)") }
        }
    }

    /// Saves what the daemon changes by itself: a scheduled pick, a clip starting or ending.
    /// (Commands are saved before they are acknowledged.)
    private func save(_ changes: AsyncStream<JukeboxEvent>, with writer: StateWriter) async {
        await cancelWhenGracefulShutdown {
            for await event in changes {
                switch event {
                case .queued(let entry, _) where !entry.origin.isClient: break
                // Quiet began or ended, or requests held for its end were released.
                case .playing, .finished, .quiet: break
                default: continue
                }
                do { try await writer.save() } catch { self.logger.error("\(error)") }
            }
        }
    }

    /// How long the output's oldest unfinished call has run: a call stuck in a driver is
    /// what the systemd watchdog must see.
    public func outputStall() -> Duration? { output.longestCall() }

    // MARK: - Commands

    /// Queues clips by id, or by the name of a file inside the clips folder, all or none.
    /// A file that is not in the session is opened first, so one that is not audio is
    /// refused now rather than failing later.
    ///
    /// `afterQuiet`: while it is quiet (quiet hours, or by hand), the clips are held, durably,
    /// and queued when quiet ends; their position is then nil. When it is not quiet they are
    /// queued at once, as without it.
    public func enqueue(_ names: [String], cue: Bool, client: String, afterQuiet: Bool = false) async throws(JukeboxError) -> Acknowledged<[(entry: QueueEntry, position: Int?)]> {
        try Self.checkClient(client)
        let resolver = ClipResolver(catalog: catalog)
        var clips: [PlayableClip] = []
        for name in names {
            let clip = try resolver.resolve(name)
            if catalog.session.clip(id: clip.id)?.source.path != clip.source.path {
                do {
                    _ = try await decoder.probe(clip.source)
                } catch {
                    throw .unplayable(name, reason: "\(error)")
                }
            }
            clips.append(clip)
        }
        let cueClip = cue ? sessionCue : nil
        return await acknowledge(try await admit(clips, cue: cueClip, client: client, afterQuiet: afterQuiet), .enqueue)
    }

    /// Queues clips, or holds them until quiet ends (see `enqueue`).
    private func admit(_ clips: [PlayableClip], cue: PlayableClip?, client: String, afterQuiet: Bool) async throws(JukeboxError) -> [(entry: QueueEntry, position: Int?)] {
        do {
            guard afterQuiet, await quiet.isQuietNow() else {
                return try await queue.enqueue(contentsOf: clips, cue: cue, origin: .client(client)).map { ($0.entry, $0.position) }
            }
            let held = try await queue.hold(contentsOf: clips, cue: cue, origin: .client(client))
            logger.info("held \(clips.map(\.id).joined(separator: ", ")) for \(client) until quiet ends", metadata: ["client": "\(client)"])
            // Quiet may have ended while they were being held, after its end released the rest.
            await quiet.settleNow()
            return held.map { ($0, nil) }
        } catch {
            throw .queueFull(error)
        }
    }

    /// Queues the session's clip with this title (the names Home Assistant's select shows),
    /// or, when no clip has it, this id. Refused with suggestions when neither is found.
    public func enqueue(titled title: String, cue: Bool = false, client: String, afterQuiet: Bool = false) async throws(JukeboxError) -> Acknowledged<[(entry: QueueEntry, position: Int?)]> {
        let clips = catalog.session.clips
        guard let clip = clips.first(where: { $0.title == title }) ?? clips.first(where: { $0.id == title }) else {
            let shown = String(title.prefix(100))
            throw .unknownClip(shown, suggestions: ClipResolver(catalog: catalog).suggestions(for: shown))
        }
        return try await enqueue([clip.id], cue: cue, client: client, afterQuiet: afterQuiet)
    }

    /// Queues an announcement: `text` spoken by the session's speech engine (`tts`), FIFO
    /// like any clip. Its audio is started at once in the background; if it cannot be made,
    /// the entry fails at its turn with the reason, and the queue goes on.
    public func say(_ text: String, cue: Bool, client: String, afterQuiet: Bool = false) async throws(JukeboxError) -> Acknowledged<(entry: QueueEntry, position: Int?)> {
        try Self.checkClient(client)
        let spoken: String
        switch SpeechText.check(text) {
        case .success(let checked): spoken = checked
        case .failure(let problem): throw .invalidParameter(problem.description)
        }
        guard let speech else {
            throw .invalidParameter("announcements are off: this jukeboxd keeps no state, so it has nowhere to keep their audio")
        }
        let cueClip = cue ? sessionCue : nil
        let accepted = try await admit([.announcement(spoken)], cue: cueClip, client: client, afterQuiet: afterQuiet)[0]
        await speech.prepare(spoken)
        return await acknowledge(accepted, .say)
    }

    /// The name a client gives itself: copied into every entry and the state file, so bounded.
    private static func checkClient(_ client: String) throws(JukeboxError) {
        guard (1...maxClientLength).contains(client.count) else {
            throw .invalidParameter("\"client\" must be a name of 1 to \(maxClientLength) characters")
        }
    }

    /// The session's cue as it plays before an entry, if the session has one.
    private var sessionCue: PlayableClip? { catalog.session.cue.map { PlayableClip(id: "cue", source: $0, title: "cue") } }

    /// Removes waiting entries; returns those removed and those not waiting (playing,
    /// played or unknown).
    public func remove(_ tickets: [UInt64]) async -> Acknowledged<(removed: [UInt64], notWaiting: [UInt64])> {
        var removed: [UInt64] = [], notWaiting: [UInt64] = []
        for ticket in tickets {
            if await queue.remove(ticket: ticket) { removed.append(ticket) } else { notWaiting.append(ticket) }
        }
        return await acknowledge((removed, notWaiting), .remove)
    }

    public func clear() async -> Acknowledged<[UInt64]> { await acknowledge(await queue.clear(), .clear) }

    public func skip() async -> Acknowledged<QueueEntry?> { await acknowledge(await queue.skip(), .skip) }

    public func pause() async -> Acknowledged<Bool> {
        await queue.pause()
        return await acknowledge(true, .pause)
    }

    public func resume() async -> Acknowledged<Bool> {
        await queue.resume()
        return await acknowledge(false, .resume)
    }

    /// The highest level any front end may set: the session's `maxVolume`, on the 0–100 scale.
    var maxVolumeLevel: Int { Int((catalog.session.maxVolume * Double(Self.volumeRange.upperBound)).rounded(.down)) }

    /// Turns quiet on or off by hand, or on for a while (`QuietHours.forRange`); returns the
    /// status it leaves.
    public func setQuiet(_ request: QuietHours.Request) async throws(JukeboxError) -> Acknowledged<QuietHours.Status> {
        if case .for(let length) = request, !QuietHours.forRange.contains(length) {
            throw .invalidParameter("quiet lasts from \(DurationText.format(QuietHours.forRange.lowerBound)) to \(DurationText.format(QuietHours.forRange.upperBound)), not \(DurationText.format(length))")
        }
        return await acknowledge(await quiet.set(request), .setQuiet)
    }

    /// Draws a clip now, as the scheduler would; nil when none may play now.
    public func pick() async -> Acknowledged<QueueEntry?> { await acknowledge(await scheduler.pick(), .pick) }

    /// Sets the volume, 0–100, held to the session's `maxVolume`; returns the level set.
    public func setVolume(_ requested: Int) async throws(JukeboxError) -> Acknowledged<Int> {
        guard Self.volumeRange.contains(requested) else {
            throw .invalidParameter("the volume must be from \(Self.volumeRange.lowerBound) to \(Self.volumeRange.upperBound), not \(requested)")
        }
        let level = min(requested, maxVolumeLevel)
        if level < requested {
            logger.info("volume \(requested) asked for; set to \(level), the session's maxVolume")
        }
        // Set by hand, it holds until the volume schedule's next step.
        await volume.setByHand(Double(level) / Double(Self.volumeRange.upperBound))
        return await acknowledge(level, .setVolume)
    }

    /// Reads the session file again. Every waiting entry keeps its place, even one whose
    /// clip the new file no longer lists: it carries its file and plays (or fails with a
    /// reason in the history), never dropped unseen. The bag keeps its cycle and the counts
    /// stay. A new output is used from the next clip, a new volume at once, and a new
    /// duration counts from start-up.
    public func reload() async throws(JukeboxError) -> Acknowledged<(session: String, clips: Int)> {
        await lockSession()
        defer { unlockSession() }
        let session: Session
        do {
            session = try await loadSession()
        } catch {
            throw .sessionInvalid(problems: error.problems)
        }
        let fresh = await adopt(session)
        logger.notice("session reloaded from \(session.sourcePath): \(Plural.count(fresh.playableClips.count, "playable clip"))")
        return await acknowledge((session.name, fresh.playableClips.count), .reload)
    }

    /// Puts a session just read or edited in place of the running one: its clips are probed,
    /// a new output is used from the next clip, a new volume at once; the queue, the bag's
    /// cycle and the counts stay.
    /// `reprobe: false` (an edit) opens only files the running session did not have.
    @discardableResult
    func adopt(_ session: Session, reprobe: Bool = true) async -> ClipCatalog {
        let fresh = await ClipCatalog.probing(session, with: decoder, logger: logger, known: reprobe ? nil : catalog)
        let old = catalog.session
        catalog = fresh
        await player.configure(session.playback)
        if session.hooks != old.hooks { await hooks.configure(session.hooks) }
        if session.speech != old.speech { await speech?.configure(session.speech) }
        if session.output != old.output {
            output = WatchedSink(makeSink(session.output))
            await player.useSink(ConvertingSink(output, makeRateConverter: configuration.makeRateConverter))
        }
        await volume.reload(session)
        await scheduler.reload(session, clips: fresh.playableClips)
        await timetable.reload(session, clips: fresh.playableClips)
        await quiet.reload(session)
        await queue.setFixedTimeGrace(session.atGrace)
        await loudness.adopt(target: session.loudness, sources: Self.loudnessSources(fresh))
        // The front ends listen from start-up: a change to theirs waits for a restart.
        for (section, changed) in [("http", session.web != old.web), ("mqtt", session.mqtt != old.mqtt)] where changed {
            logger.notice("the session's \(section) section changed; it is read at start-up, so restart jukeboxd (systemctl restart jukeboxd) to use it")
        }
        events.publish(.sessionReloaded(name: session.name, clips: fresh.playableClips.count))
        return fresh
    }

    /// The session as the daemon runs it.
    var session: Session { catalog.session }

    /// The files whose loudness counts: every playable clip's, and the cue's.
    static func loudnessSources(_ catalog: ClipCatalog) -> [ClipSource] {
        catalog.playableClips.map(\.source) + (catalog.session.cue.map { [$0] } ?? [])
    }

    /// Every clip's loudness and the gain that brings it to the session's target.
    public func loudnessReport() async -> (target: Double?, clips: [(clip: Clip, loudness: Loudness?, gain: Double?)]) {
        let clips = session.clips
        let (target, figures) = await loudness.report(clips.map(\.source))
        return (target, zip(clips, figures).map { clip, figure in (clip, figure, figure.flatMap { figure in target.map { figure.gain(toward: $0) } }) })
    }

    /// Waits until no other reload or edit is under way, then holds the session until
    /// `unlockSession()`: each reads the file, and an edit writes it, so two at once could
    /// lose one.
    func lockSession() async {
        if sessionBusy {
            await withCheckedContinuation { sessionWaiters.append($0) }
        } else {
            sessionBusy = true
        }
    }

    func unlockSession() {
        if sessionWaiters.isEmpty { sessionBusy = false } else { sessionWaiters.removeFirst().resume() }
    }

    /// The one place `JukeboxCommand.mustBeDurable` is applied: a change that must be
    /// durable is marked once it is in memory, and acknowledged after `waitUntilDurable`.
    func acknowledge<Value: Sendable>(_ value: Value, _ command: JukeboxCommand) async -> Acknowledged<Value> {
        guard command.mustBeDurable, let writer else { return Acknowledged(value, durableMark: nil) }
        return Acknowledged(value, durableMark: await writer.markChange())
    }

    /// Returns once the change is on disk. Concurrent commands share one write (group
    /// commit), so a front end may carry out several before waiting for the first.
    public nonisolated func waitUntilDurable<Value>(_ acknowledged: Acknowledged<Value>) async throws(JukeboxError) {
        guard let mark = acknowledged.durableMark, let writer else { return }
        do {
            try await writer.save(through: mark)
        } catch {
            logger.error("\(error)")
            throw .stateNotSaved(reason: "\(error)")
        }
    }

    /// Carries out a command and waits until it is durable: for front ends that answer one
    /// request at a time.
    public nonisolated func durable<Value>(_ acknowledged: Acknowledged<Value>) async throws(JukeboxError) -> Value {
        try await waitUntilDurable(acknowledged)
        return acknowledged.value
    }

    // MARK: - Reading

    /// Everything there is to show, at one moment.
    public func snapshot() async -> JukeboxSnapshot {
        let queueNow = await queue.snapshot()
        let playerNow = await player.snapshot()
        let nextPick = queueNow.pickHold == nil ? await scheduler.nextPickWallTime : nil
        return JukeboxSnapshot(
            catalog: catalog, queue: queueNow, player: playerNow, nextPick: nextPick, quiet: await quiet.statusNow(),
            uptime: configuration.wallClock() - startedAt, localTime: configuration.localTime.now())
    }
}
