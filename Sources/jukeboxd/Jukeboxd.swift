import ArgumentParser
import JukeboxCore
import Logging

/// `jukeboxd SESSION`: plays a session's clips at random moments, unattended.
@main
struct Jukeboxd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jukeboxd",
        abstract: "Play a session's audio clips at random moments, shuffled, one at a time.",
        discussion: """
            Exit status: 0 after SIGINT/SIGTERM or when the session's duration is reached, \
            64 for a bad command line, 65 for an invalid session, 66 when the session file \
            cannot be read.
            """
    )

    @Argument(help: "The session file (JSON).")
    var session: String

    @Option(help: "The ALSA PCM to play through (overrides the session's \"device\"; see `aplay -L`).")
    var device: String?

    @Option(help: "Log level: trace, debug, info, notice, warning or error.")
    var logLevel: Logger.Level = .info

    @Option(help: "Seed for the shuffle and the gaps, to reproduce a run.")
    var seed: UInt64?

    @Flag(help: "Check the session and every clip file, then exit.")
    var check = false

    func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "jukeboxd")
        var session: Session
        do {
            session = try SessionLoader.load(path: self.session)
        } catch {
            for line in error.problems { printError(line) }
            throw ExitCode(error.exitCode)
        }
        if let device { session.device = device }

        let daemon = Daemon(session: session, seed: seed, logger: logger)
        let playable = await daemon.playableClips(warn: !check)
        if check {
            throw ExitCode(daemon.report(playable))
        }
        guard !playable.clips.isEmpty else {
            printError("\(session.sourcePath): none of the session's clips can be played (see the warnings above)")
            throw ExitCode(65)
        }
        try await daemon.run(clips: playable.clips, cue: playable.cue)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
