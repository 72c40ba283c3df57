import ArgumentParser
import Glibc
import JukeboxProtocol

extension JukeboxCLI {
    struct Play: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "play", abstract: "Queue clips at the back of the queue, by clip id or by a file inside the session's clips folder.")

        @OptionGroup var options: ClientOptions

        @Argument(help: "Clip ids or file paths.")
        var clips: [String]

        @Flag(help: "Play the session's cue before each clip.")
        var cue = false

        @Option(help: "A name for whoever queues them (a script, a room), shown as their origin in `jukebox queue` and `jukebox history`.")
        var client: String?

        @Flag(name: .customLong("after-quiet"), help: "While it is quiet (quiet hours, or `jukebox quiet`), hold them and play them once it ends, instead of now.")
        var afterQuiet = false

        @Flag(help: "Cut in: play them before everything waiting, cutting the clip playing now, which goes on after them (the session's afterCut).")
        var now = false

        @Option(help: ArgumentHelp("Play them at this volume (0-100, held to the session's maxVolume) instead of the volume, which stays as it is.", valueName: "level"))
        var volume: Int?

        @Option(name: .customLong("stop-after"), help: ArgumentHelp("Stop each after this long (such as 10s or 1m30s, from 100ms to 24h), fading out.", valueName: "length"))
        var stopAfter: String?

        func validate() throws {
            if clips.isEmpty { throw ValidationError("name at least one clip (`jukebox clips` lists them)") }
            if let volume, !(0...100).contains(volume) { throw ValidationError("--volume must be from 0 to 100") }
            if client?.isEmpty == true { throw ValidationError("--client takes a name") }
            if now, afterQuiet { throw ValidationError("--now and --after-quiet cannot be given together: one cuts in at once, the other waits until quiet ends") }
        }

        /// `{"clips": […], "cue": …, "client": …}`.
        static func params(
            clips: [String], cue: Bool, client: String?, afterQuiet: Bool = false, now: Bool = false, volume: Int? = nil, stopAfter: String? = nil
        ) -> [String: JSONValue] {
            var params: [String: JSONValue] = ["clips": .array(clips.map { .string(located($0)) }), "cue": .bool(cue)]
            if let client { params["client"] = .string(client) }
            if afterQuiet { params["afterQuiet"] = .bool(true) }
            if now { params["now"] = .bool(true) }
            if let volume { params["volume"] = .number(Double(volume)) }
            if let stopAfter { params["stopAfter"] = .string(stopAfter) }
            return params
        }

        /// A clip named by a path from where the user stands (`clips/water.wav`, `../x.wav`) that
        /// is a file here goes as its absolute path, which jukeboxd takes when it is inside the
        /// session's clips folder. An id, a bare file name, or a path that is no file here goes
        /// as typed: jukeboxd reads it from the clips folder.
        static func located(_ name: String) -> String {
            guard name.contains("/"), !name.hasPrefix("/") else { return name }
            var info = stat()
            guard stat(name, &info) == 0, info.st_mode & S_IFMT == S_IFREG, let folder = getcwd(nil, 0) else { return name }
            defer { free(folder) }
            return String(cString: folder) + "/" + name
        }

        func run() throws {
            try Self.run(options.settings, clips: clips, cue: cue, client: client, afterQuiet: afterQuiet, now: now, volume: volume, stopAfter: stopAfter)
        }

        static func run(
            _ options: ClientSettings, clips: [String], cue: Bool, client: String?, afterQuiet: Bool = false, now: Bool = false, volume: Int? = nil, stopAfter: String? = nil
        ) throws {
            let params = params(clips: clips, cue: cue, client: client, afterQuiet: afterQuiet, now: now, volume: volume, stopAfter: stopAfter)
            try options.run("enqueue", params, as: EnqueueResult.self) { result in
                result.entries.map(accepted).joined(separator: "\n")
            }
        }

        /// `queued 12 ward (position 2)`, `queued 12 ward now (position 1)`, or `held 12 ward
        /// until quiet ends`.
        /// `queued 12 ward (position 2)`, `queued 12 ward now at volume 40 for 10s (position
        /// 1)`, or `held 12 ward until quiet ends`.
        static func accepted(_ entry: EntryInfo) -> String {
            entry.afterQuiet == true
                ? "held \(entry.ticket) \(entry.shown)\(Format.details(entry)) until quiet ends"
                : "queued \(entry.ticket) \(entry.shown)\(Format.details(entry)) (position \(entry.position ?? 0))"
        }
    }

    struct Say: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "say",
            abstract: "Queue a spoken announcement at the back of the queue, made by the session's speech engine (tts; espeak-ng by default).",
            discussion: "Quote the text: jukebox say \"Dinner is ready\". It may be up to 1000 characters.")

        @OptionGroup var options: ClientOptions

        @Argument(help: "The text to say. Several words are joined with spaces.")
        var words: [String]

        @Flag(help: "Play the session's cue before it.")
        var cue = false

        @Option(help: "A name for whoever queues it, shown as its origin in `jukebox queue` and `jukebox history`.")
        var client: String?

        @Flag(name: .customLong("after-quiet"), help: "While it is quiet, hold it and say it once quiet ends, instead of now.")
        var afterQuiet = false

        @Flag(help: "Cut in: say it before everything waiting, cutting the clip playing now, which goes on after it (the session's afterCut).")
        var now = false

        func validate() throws {
            if words.allSatisfy({ $0.allSatisfy(\.isWhitespace) }) { throw ValidationError("give the text to say, such as: jukebox say \"Dinner is ready\"") }
            if client?.isEmpty == true { throw ValidationError("--client takes a name") }
            if now, afterQuiet { throw ValidationError("--now and --after-quiet cannot be given together: one cuts in at once, the other waits until quiet ends") }
        }

        func run() throws {
            var params: [String: JSONValue] = ["text": .string(words.joined(separator: " ")), "cue": .bool(cue)]
            if let client { params["client"] = .string(client) }
            if afterQuiet { params["afterQuiet"] = .bool(true) }
            if now { params["now"] = .bool(true) }
            try options.run("say", params, as: EnqueueResult.self) { result in
                result.entries.map(Play.accepted).joined(separator: "\n")
            }
        }
    }

    struct Skip: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "skip", abstract: "Stop the clip playing now; the queue goes on.")
        @OptionGroup var options: ClientOptions

        func run() throws { try Self.run(options.settings) }

        static func run(_ options: ClientSettings) throws {
            try options.run("skip", as: SkipResult.self) { result in
                result.skipped.map { "skipped \($0.ticket) \($0.shown)" } ?? "nothing is playing"
            }
        }
    }

    struct Pause: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause playback mid-clip, and the scheduler.")
        @OptionGroup var options: ClientOptions

        func run() throws { try Self.run(options.settings) }

        static func run(_ options: ClientSettings) throws {
            try options.run("pause", as: PauseResult.self) { _ in "paused" }
        }
    }

    struct Resume: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume playback where it was paused.")
        @OptionGroup var options: ClientOptions

        func run() throws { try Self.run(options.settings) }

        static func run(_ options: ClientSettings) throws {
            try options.run("resume", as: PauseResult.self) { _ in "playing" }
        }
    }

    struct Pick: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "pick", abstract: "Make the scheduler pick a clip now (time windows still apply).")
        @OptionGroup var options: ClientOptions

        func run() throws { try Self.run(options.settings) }

        static func run(_ options: ClientSettings) throws {
            try options.run("pick", as: PickResult.self) { result in
                result.entry.map { "picked \($0.ticket) \($0.shown)" }
                    ?? "nothing picked: outside the session's active hours, or no clip's window is open"
            }
        }
    }

    struct Volume: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "volume", abstract: "Show or set the master volume (0-100).")
        @OptionGroup var options: ClientOptions

        // Taken as it comes, so that `-5` is a change rather than an unknown option.
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The new volume, 0 to 100, or a change such as +5 or -5.", valueName: "level"))
        var level: [String] = []

        enum Change: Equatable { case to(Int), by(Int) }

        /// `40`, `+5` or `-5`; nil for anything else.
        static func change(_ text: String) -> Change? {
            guard let first = text.first, text.count <= 4 else { return nil }
            let digits = first == "+" || first == "-" ? text.dropFirst() : Substring(text)
            guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let value = Int(digits) else { return nil }
            return first == "+" ? .by(value) : first == "-" ? .by(-value) : .to(value)
        }

        func validate() throws {
            guard level.count <= 1 else { throw ValidationError("give one volume, such as 40, +5 or -5") }
            guard let text = level.first else { return }
            switch Self.change(text) {
            case .to(let value)? where (0...100).contains(value): return
            case .by(let step)? where (0...100).contains(abs(step)): return
            default: throw ValidationError("the volume is a whole number from 0 to 100, or a change such as +5 or -5, not \"\(text)\"")
            }
        }

        func run() throws {
            var target: Int?
            switch level.first.flatMap(Self.change) {
            case .to(let value)?: target = value
            case .by(let step)?:
                // From the volume as it is now, held to 0–100.
                let now: Int
                do { now = try options.connect().call("volume", as: VolumeResult.self).0.volume } catch let error as ClientError { throw options.fail(error) }
                target = min(100, max(0, now + step))
            case nil: break
            }
            try options.run("volume", target.map { ["level": .number(Double($0))] } ?? [:], as: VolumeResult.self) { "volume \($0.volume)" }
        }
    }

    struct Quiet: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "quiet", abstract: "Show quiet, or turn it on or off by hand: nothing jukeboxd starts by itself plays while it is quiet.",
            discussion: """
                jukebox quiet            show whether it is quiet, why, and until when
                jukebox quiet on         quiet until `jukebox quiet off`
                jukebox quiet for 30m    quiet for a while (1m to 7d), say for a meeting
                jukebox quiet off        end quiet by hand, and lift the session's quiet hours until they end
                What you or a client queue still plays while it is quiet, unless queued with --after-quiet.
                """)

        @OptionGroup var options: ClientOptions

        @Argument(help: "on, off, or for and a length such as 30m.")
        var words: [String] = []

        var params: [String: JSONValue] {
            get throws {
                switch words {
                case []: return [:]
                case ["on"], ["off"]: return ["set": .string(words[0])]
                case let words where words.count == 2 && words[0] == "for": return ["for": .string(words[1])]
                default: throw ValidationError("say `jukebox quiet on`, `jukebox quiet off` or `jukebox quiet for 30m`")
                }
            }
        }

        func validate() throws { _ = try params }

        func run() throws {
            try options.run("quiet", try params, as: QuietInfo.self) { Format.quiet($0) }
        }
    }

    struct Alert: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "alert", abstract: "Start one of the session's alerts, end the one on, or show it.",
            discussion: """
                jukebox alert            show the alert on (which, since when, who started it) and the session's alerts
                jukebox alert lockdown   start the alert named lockdown: it cuts in at once and repeats until ended
                jukebox alert off        end it: its end clip plays once, then what waited, in order
                While an alert is on nothing else plays: fixed times are held back, and what is queued waits for its end.
                It sounds at its own level, whatever the volume, quiet hours and maxVolume say, and a restart sounds it
                again. See docs/alerts.md.
                """)

        @OptionGroup var options: ClientOptions

        @Argument(help: "An alert's name, or off.")
        var name: String?

        @Option(help: "A name for whoever starts or ends it, shown in `jukebox alert` and the history.")
        var client: String?

        func run() throws {
            var params: [String: JSONValue] = [:]
            switch name {
            case nil: break
            case "off"?: params["end"] = .bool(true)
            case let name?: params["start"] = .string(name)
            }
            if name != nil, let client { params["client"] = .string(client) }
            try options.run("alert", params, as: AlertResult.self) { Format.alert($0) }
        }
    }

    struct Bed: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bed", abstract: "Show the music bed, or turn its music off or on; the clips play either way.",
            discussion: """
                jukebox bed         show the bed: its pipe, whether music comes in, whether it is lowered
                jukebox bed off     fade the music out (it stays off across restarts)
                jukebox bed on      bring it back
                The session's "bed" section names the pipe the music comes in through (see docs/music.md).
                """)

        @OptionGroup var options: ClientOptions

        @Argument(help: "on or off.")
        var words: [String] = []

        var params: [String: JSONValue] {
            get throws {
                switch words {
                case []: return [:]
                case ["on"], ["off"]: return ["set": .string(words[0])]
                default: throw ValidationError("say `jukebox bed`, `jukebox bed on` or `jukebox bed off`")
                }
            }
        }

        func validate() throws { _ = try params }

        func run() throws {
            try options.run("bed", try params, as: BedInfo.self) { Format.bed($0) }
        }
    }

    struct Reload: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "reload", abstract: "Re-read the session file (an invalid file is rejected; the old session stays).")
        @OptionGroup var options: ClientOptions

        func run() throws { try Self.run(options.settings) }

        static func run(_ options: ClientSettings) throws {
            try options.run("reload", as: ReloadResult.self) { "reloaded \"\($0.session)\": \($0.clips) clips" }
        }
    }
}
