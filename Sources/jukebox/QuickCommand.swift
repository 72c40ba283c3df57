import ArgumentParser
import Glibc

/// A command that takes nothing but the shared options (`status`, `skip`, `pause`, …).
protocol ArgumentlessCommand: ParsableCommand {
    var options: ClientOptions { get set }
}

extension Jukebox.Status: ArgumentlessCommand {}
extension Jukebox.Clips: ArgumentlessCommand {}
extension Jukebox.Skip: ArgumentlessCommand {}
extension Jukebox.Pause: ArgumentlessCommand {}
extension Jukebox.Resume: ArgumentlessCommand {}
extension Jukebox.Pick: ArgumentlessCommand {}
extension Jukebox.Reload: ArgumentlessCommand {}
extension Jukebox.QueueCommand: ArgumentlessCommand {}
extension Jukebox.Clear: ArgumentlessCommand {}

/// Runs an argumentless command without ArgumentParser when the command line is exactly
/// that command plus `--socket PATH` and `--json`. Scripts and home automation call these
/// many times a minute, and ArgumentParser's reflection over the command tree costs more
/// than the round trip to jukeboxd (BENCHMARKS.md). Any other command line, including
/// `--help` and anything misspelt, goes to ArgumentParser, so usage errors and help text
/// come from one place.
struct QuickCommand {
    static let commands: [String: any ArgumentlessCommand.Type] = [
        "status": Jukebox.Status.self, "clips": Jukebox.Clips.self, "skip": Jukebox.Skip.self,
        "pause": Jukebox.Pause.self, "resume": Jukebox.Resume.self, "pick": Jukebox.Pick.self,
        "reload": Jukebox.Reload.self, "queue": Jukebox.QueueCommand.self, "clear": Jukebox.Clear.self,
    ]

    var command: any ArgumentlessCommand.Type
    var socket: String?
    var json = false

    /// Nil unless every argument is understood here.
    init?(_ arguments: some Sequence<String>) {
        var command: (any ArgumentlessCommand.Type)?
        var arguments = arguments.makeIterator()
        while let argument = arguments.next() {
            if argument == "--json", !json {
                json = true
            } else if argument == "--socket", socket == nil, let path = arguments.next(), !path.hasPrefix("-") {
                socket = path
            } else if argument.hasPrefix("--socket="), socket == nil, argument.count > "--socket=".count {
                socket = String(argument.dropFirst("--socket=".count))
            } else if command == nil, let named = Self.commands[argument] {
                command = named
            } else {
                return nil
            }
        }
        guard let command else { return nil }
        self.command = command
    }

    /// Runs the command and ends the process, exactly as ArgumentParser's `main` would.
    func run() -> Never {
        var options = ClientOptions()
        options.socket = socket
        options.json = json
        var instance = command.init()
        instance.options = options
        do {
            try instance.run()
            exit(0)
        } catch let code as ExitCode {
            exit(code.rawValue)
        } catch {
            Jukebox.exit(withError: error)
        }
    }
}
