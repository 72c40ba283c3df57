import JukeboxALSA
import JukeboxCore
import JukeboxSndFile
import Logging
import ServiceLifecycle

/// Wires the session to the decoder, the ALSA sink, the player, the queue and the scheduler,
/// and runs them as services until a signal or the session's end.
struct Daemon {
    let session: Session
    let seed: UInt64?
    let logger: Logger
    let decoder = SndFileDecoder()

    struct Playable {
        var clips: [Clip]
        var cue: ClipSource?
        var problems: [String]
    }

    /// Opens every clip once; the ones that do not decode are left out, with a warning
    /// when `warn` is set (`--check` reports them in its verdict instead).
    func playableClips(warn: Bool = true) async -> Playable {
        var result = Playable(clips: [], cue: session.cue, problems: [])
        for clip in session.clips {
            do {
                let probe = try await decoder.probe(clip.source)
                logger.debug("\(clip.id): \(probe.format), \(DurationText.format(probe.duration))")
                result.clips.append(clip)
            } catch {
                result.problems.append("clip \(clip.id): \(error)")
                if warn { logger.warning("clip \(clip.id) left out: \(error)") }
            }
        }
        if let cue = session.cue {
            do {
                _ = try await decoder.probe(cue)
            } catch {
                result.cue = nil
                result.problems.append("cue: \(error)")
                if warn { logger.warning("cue left out: \(error)") }
            }
        }
        return result
    }

    /// `--check`: a one-line verdict on stdout, or one line per problem on stderr. Returns the exit status.
    func report(_ playable: Playable) -> Int32 {
        let enabled = playable.clips.filter(\.enabled).count
        if playable.problems.isEmpty {
            print("\(session.sourcePath): OK: \"\(session.name)\", \(playable.clips.count) clips (\(enabled) enabled), device \"\(session.device)\"")
            return 0
        }
        for problem in playable.problems { printError("\(session.sourcePath): \(problem)") }
        return 65
    }

    func run(clips: [Clip], cue: ClipSource?) async throws {
        AlsaSink.routeLibraryMessages(to: logger)
        var session = self.session
        session.cue = cue
        let player = Player(
            sink: AlsaSink(device: session.device), decoder: decoder, volume: session.volume, logger: logger)
        let queue = ClipPlayQueue(player: player, logger: logger)
        let jukebox = ClipJukebox(
            session: session, clips: clips, queue: queue, clock: ContinuousClock(),
            generator: seed.map(SeededGenerator.init(seed:)) ?? SeededGenerator(), logger: logger)

        logger.info("session \"\(session.name)\": \(clips.count) clips, device \"\(session.device)\", every \(DurationText.format(session.interval.lowerBound))–\(DurationText.format(session.interval.upperBound))")
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: queue),
                    .init(service: jukebox, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            ))
        try await group.run()
        logger.info("stopped")
    }
}
