import ArgumentParser
import Glibc

/// Runs the commands scripts and home automation call most without ArgumentParser, when the
/// command line is an argumentless command or `play CLIP… [--cue] [--now] [--client NAME]`, plus
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
        case play(Play)
    }

    /// `play`'s clips and flags.
    struct Play {
        var clips: [String] = []
        var cue = false
        var now = false
        var client: String?
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
            } else if case .play(var play) = command {
                if argument == "--cue", !play.cue {
                    play.cue = true
                } else if argument == "--now", !play.now {
                    play.now = true
                } else if argument == "--client", play.client == nil, let name = arguments.next(), !name.isEmpty, !name.hasPrefix("-") {
                    play.client = name
                } else if !argument.hasPrefix("-") {
                    play.clips.append(argument)
                } else {
                    return nil
                }
                command = .play(play)
            } else if command == nil, argument == "play" {
                command = .play(Play())
            } else if command == nil, let named = Self.argumentless(argument) {
                command = .argumentless(named)
            } else {
                return nil
            }
        }
        switch command {
        case nil: return nil
        case .play(let play) where play.clips.isEmpty: return nil
        case let command?: self.command = command
        }
    }

    /// Runs the command and ends the process, exactly as ArgumentParser's `main` would.
    func run() -> Never {
        let settings = ClientSettings(socket: socket, json: json)
        do {
            switch command {
            case .argumentless(let run): try run(settings)
            case .play(let play): try JukeboxCLI.Play.run(settings, clips: play.clips, cue: play.cue, client: play.client, now: play.now)
            }
            exit(0)
        } catch let code as ExitCode {
            exit(code.rawValue)
        } catch {
            JukeboxCLI.exit(withError: error)
        }
    }
}
