import Dispatch
import Glibc
import JukeboxALSA
import JukeboxBed
import JukeboxControl
import JukeboxDispatch
import JukeboxDuck
import JukeboxFetch
import JukeboxHTTP
import JukeboxLoudness
import JukeboxESPHome
import JukeboxMQTT
import JukeboxCore
import JukeboxProtocol
import JukeboxResample
import JukeboxSnapcast
import JukeboxSndFile
import Logging
import ServiceLifecycle
import UnixSignals

/// Wires the session to the decoder, the ALSA sink, the player, the queue, the scheduler and
/// the control socket, and runs them as services until a signal or the session's end.
struct Daemon {
    let sessionPath: String
    /// `--output` or `--device`.
    let outputOverride: OutputConfig?
    /// `--duration`.
    var durationOverride: Duration? = nil
    let seed: UInt64?
    let socketPath: String
    let socketGroup: String?
    /// nil: the default place for the session (see `statePath(for:)`).
    let statePathOverride: String?
    let queueLimit: Int
    let logger: Logger
    let decoder = SndFileDecoder()

    /// Reads the session file and applies the command line's overrides.
    func loadSession() throws(SessionLoadError) -> Session {
        applyOverrides(try SessionLoader.load(path: sessionPath))
    }

    /// `--output` or `--device` replaces the session's output, in every reading of the file and every edit.
    func applyOverrides(_ session: Session) -> Session {
        var session = session
        if let outputOverride { session.output = outputOverride }
        if let durationOverride { session.duration = durationOverride }
        return session
    }

    /// Opens every clip once: clips that do not decode are kept in the catalog with their
    /// problem (so `jukebox clips` can show it) but are never scheduled.
    func catalog(for session: Session) async -> ClipCatalog {
        await ClipCatalog.probing(session, with: decoder, logger: logger)
    }

    /// `--state`, else the default place for the session (`StateFile.defaultPath`).
    func statePath(for session: Session, environment: [String: String] = ProcessEnvironment.current) throws(StateLocationError) -> String {
        if let statePathOverride { return statePathOverride }
        return try StateFile.defaultPath(sessionName: session.name, environment: environment)
    }

    /// `--check`: a one-line verdict on stdout, or one line per problem on stderr, each as
    /// `file:line: …`: the file's own problems, then those of the clip files it names, all
    /// in one run. Returns the exit status.
    /// `startChecks`: the start's own refusals for a session that is otherwise fine (its
    /// words and exit status), made before the verdict.
    func check(startChecks: (Session) -> (message: String, exitCode: Int32)? = { _ in nil }) async -> Int32 {
        var status: Int32 = 0
        let clips: [Clip], cue: ClipSource?
        var session: Session?
        do {
            session = try loadSession()
            (clips, cue) = (session!.clips, session!.cue)
        } catch {
            for line in error.problems { printError(line) }
            if error.kind == .unreadable { return error.exitCode }
            status = error.exitCode
            (clips, cue) = (error.clips, error.cue)
        }
        // The clip id (nil: the cue) and what is wrong with its file.
        var problems: [(id: String?, text: String)] = []
        if let cue {
            do { _ = try await decoder.probe(cue) } catch { problems.append((nil, "cue: \(error)")) }
        }
        for clip in clips {
            do { _ = try await decoder.probe(clip.source) } catch { problems.append((clip.id, "clip \(clip.id): \(error)")) }
        }
        if !problems.isEmpty {
            // The file is read again for the lines only when there is something to place.
            let lines = SessionLoader.lines(ofClipsIn: sessionPath)
            let placed = problems.map { (line: ($0.id.map { lines.clips[$0] } ?? lines.cue) ?? 1, text: $0.text) }
            for problem in placed.sorted(by: { $0.line < $1.line }) { printError("\(sessionPath):\(problem.line): \(problem.text)") }
        }
        // The device, opened as the service opens it, when the session could be read.
        // libasound's own lines go to the log (at debug), not between the verdicts.
        AlsaSink.routeLibraryMessages(to: logger)
        var device: DeviceCheck?
        if let session { device = await checkDevice(session.output) }
        if let device, let message = device.message {
            printError("\(deviceOrigin): \(device.isWarning ? "warning: " : "")\(message)")
        }
        guard status == 0, problems.isEmpty, let session else { return status == 0 ? 65 : status }
        if let device, device.problem != nil, !device.isWarning { return 69 }
        if let refusal = startChecks(session) {
            printError(refusal.message)
            return refusal.exitCode
        }
        let enabled = session.clips.filter(\.enabled).count
        print("\(session.sourcePath): OK: \"\(session.name)\", \(Plural.count(session.clips.count, "clip")) (\(enabled) enabled), device \"\(session.deviceName)\"")
        if let location = session.location { printSunTimes(session, location) }
        if !session.alerts.isEmpty { print("alerts: " + session.alerts.map(Self.alertWords).joined(separator: "; ")) }
        if let esphome = session.esphome {
            let found = esphome.isLoopback ? "not announced on the network" : "announced on the network (mDNS) as \(esphome.nodeName) through avahi-daemon"
            print("Home Assistant's media player \"\(esphome.name)\" on \(esphome.listen), \(esphome.encryptionKey == nil ? "without a key (this machine only)" : "with its encryption key"), \(found)")
        }
        if let calendars = session.dayPlans?.calendars, !calendars.isEmpty {
            let today = SystemLocalTime().localTime(at: Int64(Glibc.time(nil))).date
            let lines = await BlockingWorkQueue(label: "jukeboxd.check").run { calendars.map { CalendarFeeds.checkLine($0, today: today) } }
            for line in lines { print(line) }
        }
        return 0
    }

    /// An alert as `--check` lists it: `lockdown (lockdown.wav every 30s, then all-clear.wav, at 100 %)`.
    static func alertWords(_ alert: AlertSettings) -> String {
        let sound: String = switch alert.sound {
        case .clip(let id): id
        case .say(let text): "says \"\(text.prefix(30))\(text.count > 30 ? "…" : "")\""
        }
        let every = alert.every == .zero ? "back to back" : "every \(DurationText.format(alert.every))"
        let end = alert.end.map { ", then \($0)" } ?? ""
        return "\(alert.name) (\(sound) \(every)\(end), at \(Int((alert.level * 100).rounded())) %)"
    }

    /// Opens an ALSA output for a moment, as the service will (a Snapcast output's pipe is
    /// snapserver's to make, and is waited for at play).
    func checkDevice(_ output: OutputConfig) async -> DeviceCheck {
        guard case .alsa(let device) = output else { return .ok }
        return await AlsaSink.check(device: device)
    }

    /// Where a device problem is told to be: the session file's line that names the device,
    /// or the option that replaced it.
    private var deviceOrigin: String {
        outputOverride != nil ? "jukeboxd: --device" : SessionLoader.deviceField(in: sessionPath)
    }

    /// Today's sun times where the session is, to compare with a weather site, and a warning
    /// for each sun time the session uses that will not happen on some days of the coming year.
    private func printSunTimes(_ session: Session, _ location: GeoLocation) {
        let time = TimeSource.system
        let (zone, today) = (time.zone, time.localNow().date)
        let times = SunCalculator.day(today, at: location, zone: zone).map { "\($0.event) \($0.time)" }
        print("sun at \(location) on \(today), local time: " + times.joined(separator: ", "))
        for event in session.sunEventsUsed {
            let runs = SunCalculator.absences(of: event, from: today, days: 366, at: location)
            guard !runs.isEmpty else { continue }
            let days = runs.reduce(0) { $0 + $1.last.daysSinceEpoch - $1.first.daysSinceEpoch + 1 }
            let spans = runs.map { "\($0.first) to \($0.last), while the sun stays \($0.sunStaysUp ? "up" : "down")" }
            printError(
                "\(session.sourcePath): warning: there is no \(event) on \(Plural.count(days, "day")) of the coming year here (\(spans.joined(separator: "; "))); "
                    + "a window from sunrise or dawn stays open all day while the sun stays up and never opens while it stays down, and one from sunset or dusk the other way round")
        }
    }

    /// Builds the output a session's configuration names, with the music bed mixed in when
    /// the session has one.
    static func makeOutput(_ config: OutputConfig, bed: BedSettings?, time: TimeSource = .system, logger: Logger) -> AudioOutput {
        guard let bed else {
            return switch config {
            case .alsa(let device): AudioOutput(AlsaSink(device: device))
            case .snapcast(let pipe, let format): AudioOutput(SnapcastSink(path: pipe, format: format, deviceName: config.description))
            }
        }
        // Under a bed the device is written without a break (or held still, with what it
        // holds, while nothing sounds), so its buffer can be short: a clip is mixed in
        // this much ahead of being heard, in periods of the mixer's block.
        let device: any AudioSink = switch config {
        case .alsa(let device): AlsaSink(device: device, bufferTime: bedDeviceBuffer, periodTime: MixingSink.mixBlock)
        case .snapcast(let pipe, let format): SnapcastSink(path: pipe, format: format, deviceName: config.description)
        }
        // A Snapcast stream counts a clip as played once it is in the pipe, as without a bed.
        let latency: Duration = if case .alsa = config { bedDeviceBuffer } else { .zero }
        return AudioOutput(bed: MixingSink(
            device: device,
            settings: .init(pipe: bed.pipe, format: bed.format, level: bed.level, group: bed.group.flatMap(UserName.groupID)),
            outputLatency: latency, makeRateConverter: makeRateConverter, clock: ElapsedClock(time.clock), logger: logger))
    }

    /// The ALSA buffer under a music bed.
    static let bedDeviceBuffer: Duration = .milliseconds(200)

    static let makeRateConverter: RateConverterFactory = { from, to, channels in try Resampler(inputRate: from, outputRate: to, channels: channels) }

    /// Reaches a player the session's `duck` lowers, in its own protocol.
    static func duckTarget(_ player: DuckSettings.Player) -> any DuckTarget {
        switch player {
        case .mpd(let address, let passwordFile): MPDTarget(address: address, passwordFile: passwordFile)
        case .snapclient(let server, let client): SnapclientTarget(server: server, client: client)
        // The core lowers its own bed; this is never asked for it.
        case .bed: UnreachableTarget(name: player.description)
        }
    }

    /// What `duckTarget` gives for the bed, which the core lowers itself: every call says so.
    struct UnreachableTarget: DuckTarget {
        let name: String
        struct NotHere: Error, CustomStringConvertible {
            let name: String
            var description: String { "\(name) is lowered by jukeboxd's own mixer, not over a connection" }
        }
        func read() async throws -> DuckTargetState { throw NotHere(name: name) }
        func setVolume(_ percent: Int) async throws { throw NotHere(name: name) }
        func setPaused(_ paused: Bool) async throws { throw NotHere(name: name) }
    }

    func run(
        _ catalog: ClipCatalog, statePath: String, web: (settings: WebSettings, password: String?)? = nil,
        mqtt: (settings: MQTTSettings, password: String?)? = nil
    ) async throws {
        AlsaSink.routeLibraryMessages(to: logger)
        let session = catalog.session
        // A device that is not there is told now, with the names there are, rather than at
        // the first clip; the daemon runs on and opens it at each clip (a USB DAC may come later).
        if let message = await checkDevice(session.output).message {
            logger.warning("\(message); jukeboxd runs on and tries the device again at each clip")
        }
        let folder = session.clipsDirectory
        let leftovers = await BlockingWorkQueue(label: "jukeboxd.start").run {
            ClipUpload.removeLeftovers(in: folder) + ClipUpload.removeLeftovers(in: FilePath.join(folder, Jukebox.mediaFolderName))
        }
        if leftovers > 0 {
            logger.notice("removed \(Plural.count(leftovers, "unfinished upload file")) that an earlier run left in the clips folder \(folder)")
        }
        let core = Jukebox(
            catalog: catalog, decoder: decoder, converter: FFmpegConverter.find(), makeOutput: { [logger] output, bed in Self.makeOutput(output, bed: bed, logger: logger) },
            stateFile: StateFile(path: statePath), loadSession: { () throws(SessionLoadError) -> Session in try self.loadSession() },
            sessionOverrides: { session in self.applyOverrides(session) },
            configuration: Jukebox.Configuration(
                queueLimit: queueLimit, generator: seed.map(SeededGenerator.init(seed:)) ?? SeededGenerator(),
                makeRateConverter: Self.makeRateConverter,
                loudnessMeter: EBUR128Meter(), makeDuckTarget: Self.duckTarget, checkDevice: { device in await AlsaSink.check(device: device) },
                vetClientDevice: { device in await AlsaSink.clientDeviceProblem(device) }, calendarFetcher: HTTPCalendarFetcher(), mediaFetcher: HTTPMediaFetcher()),
            logger: logger)
        await core.restoreState()
        let notifier = SystemdNotifier()
        let sessionName = session.name
        let (ready, readySignal) = AsyncStream.makeStream(of: Void.self)
        // Ready once every front end listens: the socket, and the web remote when it is on.
        let listening = Countdown(web == nil ? 1 : 2) {
            notifier.send("READY=1\nSTATUS=playing \"\(sessionName)\"")
            readySignal.finish()
        }
        // What the web remote serves, told by its server to every front end's `webCA`.
        let webCertificate = WebCertificateBoard()
        let server = ControlServer(path: socketPath, group: socketGroup, core: core, webCertificate: webCertificate, logger: logger) { listening.done() }
        var frontEnds: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: server)]
        if let web {
            frontEnds.append(.init(service: WebServer(
                settings: web.settings, password: web.password, sessionsFile: WebServer.sessionsFile(besideState: statePath),
                certificates: WebCertificateStore(folder: WebCertificateStore.folder(besideState: statePath)), webCertificate: webCertificate,
                core: core, logger: logger, onListening: { _ in listening.done() })))
        }

        if let mqtt {
            // Never waited for: a broker that is away does not hold up playback or readiness.
            frontEnds.append(.init(service: MQTTFrontEnd(settings: mqtt.settings, password: mqtt.password, core: core, statePath: statePath, logger: logger)))
        }
        if let esphome = session.esphome {
            // Never waited for either: a port that is taken is tried again while clips play.
            frontEnds.append(.init(service: ESPHomeFrontEnd(settings: esphome, core: core, logger: logger)))
        }

        logger.info("jukeboxd \(JukeboxVersion.current), session \"\(session.name)\": \(Plural.count(catalog.playableClips.count, "clip")), device \"\(session.deviceName)\", every \(DurationText.format(session.interval.lowerBound))–\(DurationText.format(session.interval.upperBound))")
        // Services stop in reverse order: the socket stops taking requests before the core
        // cuts the clip playing and saves for the last time.
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: core, successTerminationBehavior: .gracefullyShutdownGroup),
                ] + frontEnds + [
                    .init(service: ReloadOnHangup(core: core, logger: logger)),
                    .init(service: SystemdService(
                        notifier: notifier, core: core, watchdog: SystemdNotifier.watchdogInterval(), ready: ready, logger: logger)),
                    // Last, so the first to hear of a stop.
                    .init(service: EndProgramsAtStop()),
                    .init(service: StopDeadline(device: session.deviceName, logger: logger)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            ))
        try await group.run()
        logger.info("stopped")
    }
}

/// A stop ends within `limit` even when a device call never returns (a driver that hangs, a
/// `file` device on a FIFO nobody reads): the log names the device, and the exit status is
/// EX_IOERR. The state was saved at each change, so nothing accepted is lost.
struct StopDeadline: Service {
    let device: String
    let logger: Logger
    static let limit: Duration = .seconds(10)

    func run() async throws {
        guard (try? await gracefulShutdown()) != nil else { return }
        // On a Dispatch timer, not a task: it fires however busy the cooperative pool is.
        let seconds = Int(Self.limit.components.seconds)
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) { [logger, device] in
            logger.critical("the stop did not end within \(seconds) s: audio device \"\(device)\" has not answered (is it stuck in its driver, or a FIFO nobody reads?); exiting without waiting for it")
            exit(74)
        }
    }
}

/// Ends every program the daemon started (ffmpeg converting an upload, a speech engine, a
/// hook) the moment a stop begins, so none holds the stop up for its time limit; the
/// request that was waiting for it is answered with why.
struct EndProgramsAtStop: Service {
    func run() async throws {
        try? await gracefulShutdown()
        await BlockingWorkQueue(label: "jukeboxd.stop").run { ChildProcess.endAll() }
    }
}
