import ArgumentParser
import Glibc

/// A command that takes nothing but the shared options (`status`, `skip`, `pause`, …).
protocol ArgumentlessCommand: ParsableCommand {
    var options: ClientOptions { get set }
}

extension JukeboxCLI.Status: ArgumentlessCommand {}
extension JukeboxCLI.Clips: ArgumentlessCommand {}
extension JukeboxCLI.Skip: ArgumentlessCommand {}
extension JukeboxCLI.Pause: ArgumentlessCommand {}
extension JukeboxCLI.Resume: ArgumentlessCommand {}
extension JukeboxCLI.Pick: ArgumentlessCommand {}
extension JukeboxCLI.Reload: ArgumentlessCommand {}
extension JukeboxCLI.QueueCommand: ArgumentlessCommand {}
extension JukeboxCLI.Clear: ArgumentlessCommand {}

/// Runs the commands scripts and home automation call most without ArgumentParser, when the
/// command line is an argumentless command or `play CLIP… [--cue] [--client NAME]`, plus
/// `--socket PATH` and `--json`. ArgumentParser's reflection over the command tree costs more than the
/// round trip to jukeboxd, and for `play` it delays the clip (BENCHMARKS.md). Any other
/// command line, including `--help` and anything misspelt, goes to ArgumentParser, so usage
/// errors and help text come from one place.
struct QuickCommand {
    /// By the name each command gives itself.
    static let commands: [String: any ArgumentlessCommand.Type] = Dictionary(uniqueKeysWithValues: ([
        JukeboxCLI.Status.self, JukeboxCLI.Clips.self, JukeboxCLI.Skip.self, JukeboxCLI.Pause.self, JukeboxCLI.Resume.self,
        JukeboxCLI.Pick.self, JukeboxCLI.Reload.self, JukeboxCLI.QueueCommand.self, JukeboxCLI.Clear.self,
    ] as [any ArgumentlessCommand.Type]).map { ($0.configuration.commandName ?? "", $0) })

    enum Command {
        case argumentless(any ArgumentlessCommand.Type)
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
            } else if command == nil, argument == JukeboxCLI.Play.configuration.commandName {
                command = .play(clips: [], cue: false, client: nil)
            } else if command == nil, let named = Self.commands[argument] {
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
        var options = ClientOptions()
        options.socket = socket
        options.json = json
        do {
            switch command {
            case .argumentless(let type):
                var instance = type.init()
                instance.options = options
                try instance.run()
            case .play(let clips, let cue, let client):
                var play = JukeboxCLI.Play()
                play.options = options
                play.clips = clips
                play.cue = cue
                play.client = client
                try play.run()
            }
            exit(0)
        } catch let code as ExitCode {
            exit(code.rawValue)
        } catch {
            JukeboxCLI.exit(withError: error)
        }
    }
}
