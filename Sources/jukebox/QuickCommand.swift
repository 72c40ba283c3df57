import ArgumentParser
import Glibc

/// Runs the commands scripts and home automation call most without ArgumentParser, when the
/// command line is an argumentless command or `play CLIP… [--cue] [--client NAME]`, plus
/// `--socket PATH` and `--json`. ArgumentParser's property wrappers, and the runtime's lookup
/// of each generic type they instantiate, cost more than the round trip to jukeboxd, and for
/// `play` they delay the clip (BENCHMARKS.md). Any other command line, including `--help` and
/// anything misspelt, goes to ArgumentParser, so usage errors and help text come from one place.
struct QuickCommand {
    /// By each command's name (a test checks them against ArgumentParser's).
    static func argumentless(_ name: String) -> ((ClientSettings) throws -> Void)? {
        switch name {
        case "status": JukeboxCLI.Status.run
        case "clips": JukeboxCLI.Clips.run
        case "skip": JukeboxCLI.Skip.run
        case "pause": JukeboxCLI.Pause.run
        case "resume": JukeboxCLI.Resume.run
        case "pick": JukeboxCLI.Pick.run
        case "reload": JukeboxCLI.Reload.run
        case "queue": JukeboxCLI.QueueCommand.run
        case "clear": JukeboxCLI.Clear.run
        default: nil
        }
    }

    static let argumentlessNames = ["status", "clips", "skip", "pause", "resume", "pick", "reload", "queue", "clear"]

    enum Command {
        case argumentless((ClientSettings) throws -> Void)
        case play(clips: [String], cue: Bool, client: String?)
    }

    var command: Command
    var socket: String?
    var json = false

    /// Nil unless every argument is understood here.
    init?(_ arguments: some Sequence<String>) {
        var command: Command?
        var arguments = arguments.makeIterator()
        while let argument = arguments.next() {
            if argument == "--json", !json {
                json = true
            } else if argument == "--socket", socket == nil, let path = arguments.next(), !path.hasPrefix("-") {
                socket = path
            } else if argument.hasPrefix("--socket="), socket == nil, argument.count > "--socket=".count {
                socket = String(argument.dropFirst("--socket=".count))
            } else if case .play(var clips, let cue, let client) = command {
                if argument == "--cue", !cue {
                    command = .play(clips: clips, cue: true, client: client)
                } else if argument == "--client", client == nil, let name = arguments.next(), !name.isEmpty, !name.hasPrefix("-") {
                    command = .play(clips: clips, cue: cue, client: name)
                } else if !argument.hasPrefix("-") {
                    clips.append(argument)
                    command = .play(clips: clips, cue: cue, client: client)
                } else {
                    return nil
                }
            } else if command == nil, argument == "play" {
                command = .play(clips: [], cue: false, client: nil)
            } else if command == nil, let named = Self.argumentless(argument) {
                command = .argumentless(named)
            } else {
                return nil
            }
        }
        switch command {
        case nil, .play(clips: [], cue: _, client: _): return nil
        case let command?: self.command = command
        }
    }

    /// Runs the command and ends the process, exactly as ArgumentParser's `main` would.
    func run() -> Never {
        let settings = ClientSettings(socket: socket, json: json)
        do {
            switch command {
            case .argumentless(let run): try run(settings)
            case .play(let clips, let cue, let client): try JukeboxCLI.Play.run(settings, clips: clips, cue: cue, client: client)
            }
            exit(0)
        } catch let code as ExitCode {
            exit(code.rawValue)
        } catch {
            JukeboxCLI.exit(withError: error)
        }
    }
}
