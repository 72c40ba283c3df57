import ArgumentParser
import Glibc
import FoundationEssentials
import JukeboxProtocol

/// `jukebox`: drives a running jukeboxd over its control socket.
@main
struct JukeboxCLI: ParsableCommand {
    // Every command names itself: otherwise ArgumentParser derives the name with
    // String(describing:), whose protocol-conformance scan was two thirds of the client's
    // start-up.
    static let configuration = CommandConfiguration(
        commandName: "jukebox",
        abstract: "Control a running jukeboxd: queue clips, see what plays, skip, pause, follow events.",
        discussion: "Exit status: 0 on success, 1 when jukeboxd refused the request (with --json, its error object is printed), 64 for a bad command line or no command, 66 when a file to add cannot be read, 69 when jukeboxd cannot be reached, 74 when a file changed while it was being sent, 77 when the socket is refused (another user could be listening there).",
        version: JukeboxVersion.current,
        subcommands: [
            Play.self, Say.self, QueueCommand.self, Status.self, Skip.self, Remove.self, Clear.self, Stop.self, Pause.self, Resume.self,
            Pick.self, Clips.self, History.self, Volume.self, Quiet.self, Alert.self, Bed.self, Health.self, Test.self, Next.self, Plan.self, Reload.self, Watch.self,
            SessionCommand.self, Add.self, Edit.self, RemoveClip.self, Enable.self, Disable.self, Schedule.self, Loudness.self, WebCA.self,
        ]
    )

    @OptionGroup var options: ClientOptions

    /// `jukebox` alone is a usage error (exit 64), not a success: a script that lost its
    /// command should notice.
    func run() throws {
        throw ValidationError("name a command, such as `jukebox status` (see `jukebox --help`)")
    }

    static func main() {
        if let quick = QuickCommand(CommandLine.arguments.dropFirst()) { quick.run() }
        if let message = unknownCommand(in: Array(CommandLine.arguments.dropFirst())) {
            let bytes = Array((message + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            Glibc.exit(64)
        }
        main(nil)
    }

    /// The commands by name, as `jukebox --help` lists them.
    static var commandNames: [String] { configuration.subcommands.compactMap { $0.configuration.commandName } }

    /// For a command line whose command is no command (`jukebox skp`): the words saying so,
    /// with the command meant when one is close. ArgumentParser would say only "Unexpected
    /// argument".
    static func unknownCommand(in arguments: [String]) -> String? {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--socket" { index += 2; continue }
            if argument.hasPrefix("-") { index += 1; continue }
            let names = commandNames
            guard argument != "help", !names.contains(argument) else { return nil }
            let reach = max(1, argument.count / 3)
            let close = (names + ["help"]).filter { $0.hasPrefix(argument) || editDistance($0, argument) <= reach }
                .sorted { (editDistance($0, argument), $0) < (editDistance($1, argument), $1) }
            let meant = close.isEmpty ? "" : "; did you mean \(close.prefix(3).joined(separator: " or "))?"
            return "jukebox: there is no command \"\(argument)\"\(meant) (`jukebox --help` lists them)"
        }
        return nil
    }
}

/// Options every command shares; they may come before or after the command name.
struct ClientOptions: ParsableArguments {
    @Option(help: "jukeboxd's control socket (default: $JUKEBOX_SOCKET, $XDG_RUNTIME_DIR/jukeboxd.sock, /run/jukeboxd/jukeboxd.sock as root, else /tmp/jukeboxd-UID/jukeboxd.sock, falling back to the system service's /run/jukeboxd/jukeboxd.sock).")
    var socket: String?

    @Flag(help: "Print the raw JSON result, for scripts.")
    var json = false

    /// The options as plain values: what every command runs with.
    var settings: ClientSettings { ClientSettings(socket: socket, json: json) }

    func connect(timeoutSeconds: Int = 10) throws -> ControlClient { try settings.connect(timeoutSeconds: timeoutSeconds) }

    /// Runs one method and prints its result: raw JSON with `--json`, else `human(result)`.
    func run<Result: Encodable & JSONReadable>(
        _ method: String, _ params: [String: JSONValue] = [:], as type: Result.Type, timeoutSeconds: Int = 10, human: (Result) -> String
    ) throws {
        try settings.run(method, params, as: type, timeoutSeconds: timeoutSeconds, human: human)
    }

    static func json(_ value: some Encodable) -> String { ClientSettings.json(value) }

    func fail(_ error: ClientError) -> ExitCode { settings.fail(error) }
}

/// `--socket` and `--json` as plain values. The quick path (`QuickCommand`) runs the commands
/// scripts call most with these alone, without making ArgumentParser's property wrappers.
struct ClientSettings {
    var socket: String?
    var json = false

    func connect(timeoutSeconds: Int = 10) throws -> ControlClient {
        do {
            return try ControlClient(path: SocketPath.resolveForClient(explicit: socket), timeoutSeconds: timeoutSeconds)
        } catch {
            throw fail(error)
        }
    }

    /// Runs one method and prints its result: raw JSON with `--json`, else `human(result)`.
    func run<Result: Encodable & JSONReadable>(
        _ method: String, _ params: [String: JSONValue] = [:], as type: Result.Type, timeoutSeconds: Int = 10, human: (Result) -> String
    ) throws {
        let client = try connect(timeoutSeconds: timeoutSeconds)
        do {
            let (result, _) = try client.call(method, params, as: type)
            // Written straight out: `print` looks up at run time how to write its argument.
            Output.line(json ? Self.json(result) : human(result))
        } catch {
            throw fail(error)
        }
    }

    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "null"
    }

    /// Says why on stderr; with `--json`, a refusal's error object (`code`, `message`,
    /// `data.reason`, `data.suggestions`…) also goes to stdout, so scripts can read it.
    func fail(_ error: ClientError) -> ExitCode {
        if json, let refusal = error.refusal { print(Self.json(refusal)) }
        printError(error.message)
        return ExitCode(error.exitCode)
    }
}