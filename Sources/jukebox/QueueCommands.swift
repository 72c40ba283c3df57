import ArgumentParser
import JukeboxProtocol

extension JukeboxCLI {
    struct QueueCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "queue", abstract: "Show what is playing and what is waiting, in order.")
        @OptionGroup var options: ClientOptions

        func run() throws { try Self.run(options.settings) }

        static func run(_ options: ClientSettings) throws {
            try options.run("queue", as: QueueResult.self) { result in
                var lines: [String] = []
                if let playing = result.playing {
                    let progress = playing.total.map { " \(Format.clock(playing.elapsed ?? 0))/\(Format.clock($0))" } ?? ""
                    lines.append("\(playing.paused ? "paused " : "playing") \(playing.entry.ticket) \(playing.entry.shown)\(progress) (\(playing.entry.queuedBy))\(playing.entry.now == true ? " now" : "")")
                } else if let waiting = result.waitingForDevice {
                    lines.append("waiting for the audio device: \(waiting.ticket) \(waiting.shown) (\(waiting.queuedBy))")
                } else {
                    lines.append("nothing playing")
                }
                for entry in result.waiting {
                    lines.append("\(String(repeating: " ", count: 2))\(entry.position ?? 0). \(entry.ticket) \(entry.shown) (\(entry.queuedBy))\(Format.details(entry))")
                }
                if result.waiting.isEmpty { lines.append("queue empty") }
                if let held = result.held, !held.isEmpty {
                    lines.append("held until quiet ends:")
                    for entry in held { lines.append("  \(entry.ticket) \(entry.shown) (\(entry.queuedBy))") }
                }
                return lines.joined(separator: "\n")
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Drop waiting entries by ticket id.")
        @OptionGroup var options: ClientOptions

        @Argument(help: "Ticket ids, as `jukebox queue` shows them.")
        var tickets: [UInt64]

        func validate() throws {
            if tickets.isEmpty { throw ValidationError("name at least one ticket (`jukebox queue` shows them)") }
        }

        func run() throws {
            let client = try options.connect()
            let result: RemoveResult
            do {
                result = try client.call("remove", ["tickets": .array(tickets.map { .number(Double($0)) })], as: RemoveResult.self).0
            } catch {
                throw options.fail(error)
            }
            print(options.json ? ClientOptions.json(result) : result.removed.map { "removed \($0)" }.joined(separator: "\n"))
            if !result.notWaiting.isEmpty {
                printError("jukebox: not waiting (already played, playing or unknown): \(result.notWaiting.map(String.init).joined(separator: ", "))")
                throw ExitCode(1)
            }
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clear", abstract: "Drop every waiting entry (the clip playing now goes on).")
        @OptionGroup var options: ClientOptions

        func run() throws { try Self.run(options.settings) }

        static func run(_ options: ClientSettings) throws {
            try options.run("clear", as: RemoveResult.self) { "removed \($0.removed.count) waiting clip\($0.removed.count == 1 ? "" : "s")" }
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stop", abstract: "Stop the clip playing now and drop everything waiting; or, with --queued-by, only what that client queued.")
        @OptionGroup var options: ClientOptions

        @Option(name: .customLong("queued-by"), help: ArgumentHelp("Only what this client queued (`siren` for Home Assistant's siren, or a --client name).", valueName: "name"))
        var queuedBy: String?

        func run() throws {
            let params: [String: JSONValue] = queuedBy.map { ["queuedBy": .string($0)] } ?? [:]
            try options.run("stop", params, as: StopResult.self) { result in
                let skipped = result.skipped.map { "stopped \($0.ticket) \($0.shown)" } ?? "nothing playing was stopped"
                return "\(skipped); removed \(result.removed.count) waiting clip\(result.removed.count == 1 ? "" : "s")"
            }
        }
    }
}
