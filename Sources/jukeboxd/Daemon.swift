import JukeboxALSA
import JukeboxControl
import JukeboxCore
import JukeboxProtocol
import JukeboxSndFile
import Logging
import ServiceLifecycle
import UnixSignals

/// Wires the session to the decoder, the ALSA sink, the player, the queue, the scheduler and
/// the control socket, and runs them as services until a signal or the session's end.
struct Daemon {
    let sessionPath: String
    let deviceOverride: String?
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
        var session = try SessionLoader.load(path: sessionPath)
        if let deviceOverride { session.device = deviceOverride }
        return session
    }

    /// Opens every clip once: clips that do not decode are kept in the catalog with their
    /// problem (so `jukebox clips` can show it) but are never scheduled.
    func catalog(for session: Session, warn: Bool = true) async -> ClipCatalog {
        var catalog = ClipCatalog(session: session)
        for clip in session.clips {
            do {
                catalog.durations[clip.id] = try await decoder.probe(clip.source).duration
            } catch {
                catalog.problems[clip.id] = "\(error)"
                if warn { logger.warning("clip \(clip.id) left out: \(error)") }
            }
        }
        if let cue = session.cue {
            do {
                _ = try await decoder.probe(cue)
            } catch {
                catalog.session.cue = nil
                catalog.problems["cue"] = "\(error)"
                if warn { logger.warning("cue left out: \(error)") }
            }
        }
        return catalog
    }

    /// `--state`, else the default place for the session (`StateFile.defaultPath`).
    func statePath(for session: Session, environment: [String: String] = ProcessEnvironment.current) throws(StateLocationError) -> String {
        if let statePathOverride { return statePathOverride }
        return try StateFile.defaultPath(sessionName: session.name, environment: environment)
    }

    /// "1 clip", "7 clips".
    static func clips(_ count: Int, _ noun: String = "clip") -> String { count == 1 ? "1 \(noun)" : "\(count) \(noun)s" }

    /// `--check`: a one-line verdict on stdout, or one line per problem on stderr. Returns the exit status.
    func report(_ catalog: ClipCatalog) -> Int32 {
        let session = catalog.session
        if catalog.problems.isEmpty {
            let enabled = session.clips.filter(\.enabled).count
            print("\(session.sourcePath): OK: \"\(session.name)\", \(Self.clips(session.clips.count)) (\(enabled) enabled), device \"\(session.device)\"")
            return 0
        }
        for (id, problem) in catalog.problems.sorted(by: { $0.key < $1.key }) {
            printError("\(session.sourcePath): \(id == "cue" ? "cue" : "clip \(id)"): \(problem)")
        }
        return 65
    }

    func run(_ catalog: ClipCatalog, statePath: String) async throws {
        AlsaSink.routeLibraryMessages(to: logger)
        let session = catalog.session
        let player = Player(sink: AlsaSink(device: session.device), decoder: decoder, volume: session.volume, options: session.playback, logger: logger)
        let queue = ClipPlayQueue(player: player, capacity: queueLimit, logger: logger)
        let jukebox = ClipJukebox(
            session: session, clips: catalog.playableClips, queue: queue, clock: ContinuousClock(),
            generator: seed.map(SeededGenerator.init(seed:)) ?? SeededGenerator(), logger: logger)
        let stateFile = StateFile(path: statePath)
        switch await stateFile.load() {
        case .missing:
            logger.info("no saved state at \(stateFile.path); starting with an empty queue")
        case .corrupt(let movedTo, let reason):
            logger.warning("state file \(stateFile.path) could not be used (\(reason)); kept it as \(movedTo) and started with an empty queue")
        case .loaded(let saved):
            let (state, refused) = saved.confined(to: session, now: SystemWallClock.now())
            for entry in refused {
                logger.warning("state file \(stateFile.path): ticket \(entry.ticket) names \(entry.clip.path), outside the clips folder \(session.clipsDirectory); not queued")
            }
            await state.restore(into: queue, jukebox: jukebox)
            logger.info("restored \(state.waiting.count) queued clips\(state.paused ? ", paused" : "") from \(stateFile.path)")
        }
        let writer = StateWriter(file: stateFile) { await PersistedState.snapshot(queue: queue, jukebox: jukebox) }
        await queue.setRiskyStartHook { [logger] in
            do { try await writer.save() } catch { logger.error("\(error)") }
        }
        let controller = DaemonController(
            catalog: catalog, queue: queue, jukebox: jukebox,
            reloader: { () async throws(SessionLoadError) -> ClipCatalog in
                let fresh = await self.catalog(for: try self.loadSession())
                await player.configure(fresh.session.playback)
                self.logger.notice("session reloaded from \(self.sessionPath): \(Self.clips(fresh.playableClips.count, "playable clip"))")
                return fresh
            },
            writer: writer)
        let notifier = SystemdNotifier()
        let sessionName = session.name
        let (ready, readySignal) = AsyncStream.makeStream(of: Void.self)
        let server = ControlServer(path: socketPath, group: socketGroup, control: controller, logger: logger) {
            notifier.send("READY=1\nSTATUS=playing \"\(sessionName)\"")
            readySignal.finish()
        }

        logger.info("session \"\(session.name)\": \(Self.clips(catalog.playableClips.count)), device \"\(session.device)\", every \(DurationText.format(session.interval.lowerBound))–\(DurationText.format(session.interval.upperBound))")
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: queue),
                    .init(service: jukebox, successTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: server),
                    .init(service: ReloadOnHangup(controller: controller, logger: logger)),
                    .init(service: StatePersistence(writer: writer, events: queue.events, logger: logger)),
                    .init(service: SystemdService(
                        notifier: notifier, player: player, watchdog: SystemdNotifier.watchdogInterval(), ready: ready, logger: logger)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            ))
        // The queue stops last, after the state service has saved; save once more when all
        // have stopped, so the file holds how the last clip ended: cut short (it stays first
        // and plays again) or finished while the shutdown began (it counts as played).
        var failure: (any Error)?
        do { try await group.run() } catch { failure = error }
        do {
            try await writer.save()
        } catch {
            logger.error("\(error)")
        }
        if let failure { throw failure }
        logger.info("stopped")
    }
}

/// SIGHUP re-reads the session file, exactly like `jukebox reload`.
struct ReloadOnHangup: Service {
    let controller: any JukeboxControlling
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                do {
                    _ = try await controller.reload()
                } catch {
                    logger.error("SIGHUP: \(error)")
                }
            }
        }
    }
}

/// Saves the state when the daemon changes it by itself: a scheduled pick, a clip starting or
/// ending. (Client requests save before they are answered.)
struct StatePersistence: Service {
    let writer: StateWriter
    let events: EventBus
    let logger: Logger

    func run() async throws {
        let stream = events.subscribe()
        await cancelWhenGracefulShutdown {
            for await event in stream {
                switch event {
                case .queued(let entry, _) where entry.origin == .scheduler: break
                case .playing, .finished: break
                default: continue
                }
                do {
                    try await writer.save()
                } catch {
                    logger.error("\(error)")
                }
            }
        }
        // The last word: whatever changed while shutting down.
        try? await writer.save()
    }
}
