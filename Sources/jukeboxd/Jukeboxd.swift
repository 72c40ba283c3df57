import ArgumentParser
import Glibc
import JukeboxControl
import JukeboxHTTP
import JukeboxCore
import JukeboxFiles
import JukeboxProtocol
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
            cannot be read, 67 when --socket-group names no group, 69 when the web remote \
            cannot listen on its address (a port in use, an address not this machine's) or \
            --check cannot open the device, 73 \
            when the socket or state folder cannot be made, 75 when another jukeboxd already \
            listens on the control socket, 77 when the socket cannot be given to its group or \
            its private folder is not the user's own, 78 when there is no safe place for the \
            state file (give --state), or the web remote would listen beyond this machine \
            without a password.
            SIGHUP re-reads the session file.
            """,
        version: JukeboxVersion.current
    )

    @Argument(help: ArgumentHelp("The session file (JSON).", valueName: "session"))
    var sessionArgument: String?

    /// The session file; `validate()` has made sure there is one unless only a key is asked for.
    var session: String { sessionArgument ?? "" }

    @Option(help: "The ALSA PCM to play through (overrides the session's \"output\" or \"device\"; see `aplay -L`).")
    var device: String?

    @Option(help: ArgumentHelp(
        "Where to play, overriding the session's \"output\": snapcast:PIPE (snapserver's pipe:// source, 48000:16:2) or alsa:DEVICE.",
        valueName: "KIND:WHERE"))
    var output: String?

    @Option(help: "Log level: trace, debug, info, notice, warning or error.")
    var logLevel: Logger.Level = .info

    @Option(help: "Seed for the shuffle and the gaps, to reproduce a run.")
    var seed: UInt64?

    @Option(help: ArgumentHelp("Stop after this long, such as 20s or 2h (overrides the session's \"duration\").", valueName: "LENGTH"))
    var duration: String?

    @Option(help: "The control socket (default: $JUKEBOX_SOCKET, $XDG_RUNTIME_DIR/jukeboxd.sock, /run/jukeboxd/jukeboxd.sock as root, else /tmp/jukeboxd-UID/jukeboxd.sock).")
    var socket: String?

    @Option(help: "Group that may use the control socket (its mode is 0660).")
    var socketGroup: String?

    @Option(help: "The state file: queue, shuffle position, volume, counts (default: $STATE_DIRECTORY/state.json, else $XDG_STATE_HOME/jukeboxd/NAME.json, NAME being the session's name in lower case with - for spaces).")
    var state: String?

    @Option(help: "How many clips may wait in the queue; more are refused with `queue-full`.")
    var queueLimit = ClipPlayQueue.defaultCapacity

    @Option(help: ArgumentHelp("Serve the web remote and HTTP API on this address (overrides the session's \"http\" listen), such as 0.0.0.0:8080.", valueName: "ADDR:PORT"))
    var http: String?

    @Option(help: ArgumentHelp("The file holding the web remote's password (required unless it listens on 127.0.0.1).", valueName: "PATH"))
    var httpPasswordFile: String?

    @Flag(help: "Check the session and every clip file, then exit.")
    var check = false

    @Flag(help: "Print a fresh key for the session's \"esphome\" encryptionKey (Home Assistant asks for it), then exit.")
    var newEsphomeKey = false

    func validate() throws {
        if newEsphomeKey { return }
        guard sessionArgument != nil else { throw ValidationError("Missing expected argument '<session>': the session file (JSON) to play") }
        if let output {
            guard OutputConfig.parse(commandLine: output) != nil else {
                throw ValidationError("--output takes snapcast:PIPE (such as snapcast:/run/snapserver/jukeboxd) or alsa:DEVICE, not \"\(output)\"")
            }
            if device != nil { throw ValidationError("give --output or --device, not both") }
        }
        if let duration {
            switch DurationText.check(duration) {
            case .success(let length) where length > .zero: break
            case .success: throw ValidationError("--duration must be longer than 0s (leave it out to run until stopped)")
            case .failure(.tooLong): throw ValidationError("--duration: \"\(duration)\" is longer than \(DurationText.maximumText)")
            case .failure: throw ValidationError("--duration: \"\(duration)\" is not a length (such as 20s, 30m or 2h)")
            }
        }
        // The whole queue is rewritten on every durable change, so its size bounds each write.
        guard (1...1_000_000).contains(queueLimit) else { throw ValidationError("--queue-limit takes a number from 1 to 1000000") }
    }

    func run() async throws {
        if newEsphomeKey {
            print(ESPHomeSettings.newKey())
            return
        }
        ReleaseMemory.configureAllocator()
        // Hooks, ffmpeg and the speech engine cannot leave a program behind past their limit.
        if !check { ChildProcess.adoptOrphans() }
        let level = logLevel
        let journal = ProcessEnvironment.current["JOURNAL_STREAM"].map { !$0.isEmpty } ?? false
        LoggingSystem.bootstrap { _ in DaemonLogHandler(level: level, journal: journal) }
        let daemon = Daemon(
            sessionPath: session, outputOverride: output.flatMap(OutputConfig.parse(commandLine:)) ?? device.map { .alsa(device: $0) }, durationOverride: duration.flatMap(DurationText.parse), seed: seed, socketPath: SocketPath.resolve(explicit: socket),
            socketGroup: socketGroup, statePathOverride: state, queueLimit: queueLimit, logger: Logger(label: "jukeboxd"))
        if check {
            // Every refusal the start makes, in the same words and with the same status.
            throw ExitCode(await daemon.check { session in
                do throws(StartRefusal) {
                    _ = try startSettings(daemon, session, creating: false)
                    return nil
                } catch {
                    return (message: "jukeboxd: \(error)", exitCode: error.exitCode)
                }
            })
        }
        let session: Session
        do {
            session = try daemon.loadSession()
        } catch {
            for line in error.problems { printError(line) }
            throw ExitCode(error.exitCode)
        }
        let catalog = await daemon.catalog(for: session)
        guard !catalog.playableClips.isEmpty else {
            printError("\(session.sourcePath): none of the session's clips can be played (see the warnings above)")
            throw ExitCode(65)
        }
        let start: StartSettings
        do {
            start = try startSettings(daemon, session, creating: true)
        } catch {
            printError("jukeboxd: \(error)")
            throw ExitCode(error.exitCode)
        }
        let (web, mqtt, statePath) = (start.web, start.mqtt, start.statePath)
        if state == nil, let earlier = StateFile.moveFromEarlierName(to: statePath, sessionName: session.name, environment: ProcessEnvironment.current) {
            daemon.logger.notice("the state file \(earlier) is now \(statePath), a name without spaces; what lay beside it (the web remote's authority, announcements, logins) moved with it")
        }
        do {
            let madeFolder = try SocketFile.prepare(daemon.socketPath)
            defer { madeFolder.map(SocketFile.removeFolder) }
            // Held until the daemon has stopped.
            let stateLock = try StateLock(statePath: statePath)
            defer { withExtendedLifetime(stateLock) {} }
            try await daemon.run(catalog, statePath: statePath, web: web, mqtt: mqtt)
        } catch let error as any StartFailure {
            // The state folder, the web remote's port or certificate, the control socket
            // (before anything starts, or once bound: it could not be given to its group).
            printError("jukeboxd: \(error)")
            throw ExitCode(error.exitCode)
        }
    }
}

/// What the start settles before anything runs, besides the session and its clips.
struct StartSettings {
    var web: (settings: WebSettings, password: String?)?
    var mqtt: (settings: MQTTSettings, password: String?)?
    var statePath: String
}

/// A refusal of the start (and of `--check`): the words, and the exit status.
struct StartRefusal: Error, CustomStringConvertible {
    var description: String
    var exitCode: Int32
}

extension Jukeboxd {
    /// The checks the start makes before anything runs: the web remote's address and password,
    /// the MQTT password, the state file's folder, and the socket's group. `--check` makes
    /// the same (`creating` false: it makes no folder), so it refuses what the start would.
    func startSettings(_ daemon: Daemon, _ session: Session, creating: Bool) throws(StartRefusal) -> StartSettings {
        do {
            let web = try WebOptions(listen: http, passwordFile: httpPasswordFile).resolve(session)
            let mqtt = try MQTTOptions.resolve(session)
            let environment = ProcessEnvironment.current
            let statePath = try daemon.statePath(for: session, environment: environment)
            try StateFile(path: statePath).checkFolder(sharedFolder: StateFile.serviceFolder(environment), creating: creating)
            if let socketGroup { _ = try SocketFile.groupID(socketGroup) }
            if let group = session.bed?.group, let gid = UserName.groupID(group), !UserName.isMember(of: gid) {
                let words = "\(UserName.of(geteuid())) is not in the group \"\(group)\" that bed.group gives the music bed's FIFO to, so it could not share it: add it (sudo usermod -aG \(group) \(UserName.name(of: geteuid()))), or name a group it is in"
                // The packaged service gets `audio` from its unit (SupplementaryGroups=), which
                // `--check` run by hand does not have: there it is a warning.
                guard creating else {
                    printError("\(session.sourcePath): warning: \(words)")
                    return StartSettings(web: web, mqtt: mqtt, statePath: statePath)
                }
                throw StartRefusal(description: words, exitCode: 77)
            }
            return StartSettings(web: web, mqtt: mqtt, statePath: statePath)
        } catch let error as any StartFailure {
            throw StartRefusal(description: "\(error)", exitCode: error.exitCode)
        } catch let refusal as StartRefusal {
            throw refusal
        } catch {
            throw StartRefusal(description: "\(error)", exitCode: 78)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
