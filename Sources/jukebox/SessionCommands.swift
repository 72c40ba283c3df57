import ArgumentParser
import JukeboxProtocol

/// The fields a clip may be given on the command line (`add`, `edit`).
struct ClipFieldOptions: ParsableArguments {
    @Option(help: "The clip's title, shown in lists.")
    var title: String?

    @Option(help: "Tickets per shuffle cycle, 1 to 1000 (2 plays it twice as often).")
    var weight: Int?

    // Unconditional: the value is usually negative (`--gain -6`), which would otherwise read as a flag.
    @Option(parsing: .unconditional, help: "Gain in dB, -60 to 20.")
    var gain: Double?

    @Option(name: .customLong("window"), help: ArgumentHelp("When it may be picked: HH:MM-HH:MM, with @mon,tue… for some days only; repeat for more windows.", valueName: "HH:MM-HH:MM[@days]"))
    var windows: [String] = []

    func validate() throws {
        for window in windows { _ = try Windows.parse(window) }
    }

    /// The fields as the session file writes them.
    var fields: [String: JSONDocument] {
        var fields: [String: JSONDocument] = [:]
        if let title { fields["title"] = .string(title) }
        if let weight { fields["weight"] = .number(Double(weight)) }
        if let gain { fields["gain"] = .number(gain) }
        if !windows.isEmpty { fields["windows"] = .array(windows.compactMap { try? Windows.parse($0) }) }
        return fields
    }
}

/// `--if-revision`: refuse the edit if the session changed since the revision a script read.
struct RevisionOption: ParsableArguments {
    @Option(help: ArgumentHelp("Refuse the edit if the session is no longer at this revision (from `jukebox session`).", valueName: "REVISION"))
    var ifRevision: String?

    func adding(to params: [String: JSONDocument]) -> [String: JSONDocument] {
        var params = params
        if let ifRevision { params["ifRevision"] = .string(ifRevision) }
        return params
    }
}

/// `HH:MM-HH:MM[@mon,tue]`, as a window object of the session file. The times are checked
/// by jukeboxd, like everything in the file; only the shape is checked here.
enum Windows {
    static func parse(_ text: String) throws -> JSONDocument {
        let (span, days) = text.firstIndex(of: "@").map { (text[..<$0], Optional(text[text.index(after: $0)...])) } ?? (Substring(text), nil)
        let ends = span.split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2, !ends[0].isEmpty, !ends[1].isEmpty else {
            throw ValidationError("\"\(text)\" is not a window: write HH:MM-HH:MM, with @mon,tue… for some days only")
        }
        var window: [String: JSONDocument] = ["from": .string(String(ends[0])), "to": .string(String(ends[1]))]
        if let days {
            let names = days.split(separator: ",").map(String.init)
            guard !names.isEmpty else { throw ValidationError("\"\(text)\": name the days after @, such as @mon,tue") }
            window["days"] = .array(names.map { .string($0) })
        }
        return .object(window)
    }
}

/// Prints an edit's result: what changed and the session's new revision.
extension ClientOptions {
    func edit(_ method: String, _ params: [String: JSONDocument], done: @escaping (EditResult) -> String) throws {
        try run(method, JSONDocument.object(params), as: EditResult.self) { result in
            done(result) + " (revision \(result.revision))"
        }
    }
}

extension JukeboxCLI {
    struct SessionCommand: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "session", abstract: "Show the session as jukeboxd runs it: its file, revision, schedule and clips.")
        @OptionGroup var options: ClientOptions

        func run() throws {
            try options.run("session", as: SessionResult.self) { result in
                let session = result.resolved
                var lines = [
                    "\(result.path) (revision \(result.revision))",
                    "name:      \(session.name)",
                    "output:    \(session.output["device"] ?? "?") (\(session.output["type"] ?? "?"))",
                    "every:     \(Format.seconds(session.interval["min"] ?? 0))–\(Format.seconds(session.interval["max"] ?? 0))",
                    "active:    \(session.activeHours.isEmpty ? "always" : session.activeHours.joined(separator: ", "))",
                    "duration:  \(session.duration.map(Format.seconds) ?? "until stopped")",
                    "cue:       \(session.cue ?? "none")",
                    "volume:    \(Int((session.volume * 100).rounded()))",
                    "clips:     \(session.clips)",
                ]
                if case .object(let document) = result.document, case .array(let clips)? = document["clips"] {
                    for clip in clips { lines.append("  " + Self.describe(clip)) }
                }
                return lines.joined(separator: "\n")
            }
        }

        /// One clip as the file has it: `eyes  eyes.wav  "Rest your eyes"  weight 2  09:00-18:00`.
        static func describe(_ clip: JSONDocument) -> String {
            guard case .object(let fields) = clip else { return "?" }
            func text(_ key: String) -> String? { if case .string(let value)? = fields[key] { value } else { nil } }
            let file = text("file") ?? "?"
            var parts = [text("id") ?? String(file.split(separator: "/").last?.split(separator: ".").first ?? "?"), file]
            if let title = text("title") { parts.append("\"\(title)\"") }
            if case .number(let weight)? = fields["weight"] { parts.append("weight \(Int(exactly: weight).map(String.init) ?? "\(weight)")") }
            if case .number(let gain)? = fields["gain"] { parts.append("gain \(gain) dB") }
            if case .array(let windows)? = fields["windows"] {
                parts.append(windows.map { window in
                    guard case .object(let window) = window, case .string(let from)? = window["from"], case .string(let to)? = window["to"] else { return "?" }
                    if case .array(let days)? = window["days"] {
                        return "\(from)-\(to)@" + days.map { if case .string(let day) = $0 { day } else { "?" } }.joined(separator: ",")
                    }
                    return "\(from)-\(to)"
                }.joined(separator: ", "))
            }
            if case .bool(false)? = fields["enabled"] { parts.append("disabled") }
            return parts.joined(separator: "  ")
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Send audio files to jukeboxd and add each to the session as a clip (phone recordings are converted if ffmpeg is installed).")
        @OptionGroup var options: ClientOptions
        @OptionGroup var revision: RevisionOption

        @Argument(help: "Audio files on this machine (WAV, FLAC, Ogg, MP3…; M4A and WebM with ffmpeg on jukeboxd's machine).")
        var files: [String]

        @Option(help: "The clip's id (one file only; default: its stored file name without extension).")
        var id: String?

        @OptionGroup var clip: ClipFieldOptions

        @Flag(help: "Add it disabled: never picked until `jukebox enable`.")
        var disabled = false

        func validate() throws {
            if files.isEmpty { throw ValidationError("name at least one audio file") }
            if files.count > 1, id != nil || clip.title != nil { throw ValidationError("--id and --title apply to one file only") }
        }

        func run() throws {
            // Checking and converting a large recording on a Pi takes a while.
            let client = try options.connect(timeoutSeconds: 600)
            var results: [EditResult] = []
            for file in files {
                do {
                    let upload = try client.upload(file)
                    var params = clip.fields
                    params["upload"] = .string(upload)
                    if let id { params["id"] = .string(id) }
                    if disabled { params["enabled"] = .bool(false) }
                    let (result, _) = try client.call("addClip", JSONDocument.object(revision.adding(to: params)), as: EditResult.self)
                    results.append(result)
                    if !options.json {
                        print("added \(result.clip?.id ?? "?") from \(file) as \(result.clip?.file ?? "?") (revision \(result.revision))")
                    }
                } catch {
                    throw options.fail(error)
                }
            }
            if options.json, let only = results.first, results.count == 1 {
                print(ClientOptions.json(only))
            } else if options.json {
                print(ClientOptions.json(results))
            }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "edit", abstract: "Change a clip of the session; the session file is rewritten.")
        @OptionGroup var options: ClientOptions
        @OptionGroup var revision: RevisionOption

        @Argument(help: "The clip's id.")
        var id: String

        @OptionGroup var clip: ClipFieldOptions

        @Option(help: "Another audio file inside the clips folder for this clip.")
        var file: String?

        @Flag(help: "Clear the clip's windows: it may be picked at any time.")
        var always = false

        func validate() throws {
            if always, !clip.windows.isEmpty { throw ValidationError("give --always or --window, not both") }
        }

        func run() throws {
            var params = clip.fields
            params["id"] = .string(id)
            if let file { params["file"] = .string(file) }
            if always { params["windows"] = .array([]) }
            guard params.count > 1 else { throw ValidationError("say what to change: --title, --weight, --gain, --window, --always or --file") }
            try options.edit("updateClip", revision.adding(to: params)) { _ in "edited \(id)" }
        }
    }

    struct RemoveClip: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a clip from the session (waiting entries of it still play).")
        @OptionGroup var options: ClientOptions
        @OptionGroup var revision: RevisionOption

        @Argument(help: "The clip's id.")
        var id: String

        @Flag(help: "Delete its audio file too, if no other clip and no waiting entry uses it.")
        var deleteFile = false

        func run() throws {
            try options.edit("removeClip", revision.adding(to: ["id": .string(id), "deleteFile": .bool(deleteFile)])) { result in
                var text = "removed \(id)"
                if result.fileDeleted == true { text += "; its file was deleted" }
                if let kept = result.fileKept { text += "; its file was kept: \(kept)" }
                return text
            }
        }
    }

    struct Enable: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "enable", abstract: "Let the scheduler pick a clip again.")
        @OptionGroup var options: ClientOptions
        @OptionGroup var revision: RevisionOption
        @Argument(help: "The clip's id.") var id: String

        func run() throws {
            try options.edit("updateClip", revision.adding(to: ["id": .string(id), "enabled": .bool(true)])) { _ in "enabled \(id)" }
        }
    }

    struct Disable: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "disable", abstract: "Keep a clip in the session but never pick it (it can still be played by hand).")
        @OptionGroup var options: ClientOptions
        @OptionGroup var revision: RevisionOption
        @Argument(help: "The clip's id.") var id: String

        func run() throws {
            try options.edit("updateClip", revision.adding(to: ["id": .string(id), "enabled": .bool(false)])) { _ in "disabled \(id)" }
        }
    }

    struct Schedule: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "schedule", abstract: "Change when clips are picked; the session file is rewritten.")
        @OptionGroup var options: ClientOptions
        @OptionGroup var revision: RevisionOption

        @Option(help: ArgumentHelp("The gap before each pick, random in this range.", valueName: "MIN-MAX"))
        var every: String?

        @Option(name: .customLong("active"), help: ArgumentHelp("When picks happen at all: HH:MM-HH:MM, with @mon,tue… for some days only; repeat for more.", valueName: "HH:MM-HH:MM[@days]"))
        var active: [String] = []

        @Flag(help: "Pick at any time of day (clears --active windows).")
        var always = false

        @Option(help: ArgumentHelp("Stop after this long from start-up, such as 40m.", valueName: "DURATION"))
        var duration: String?

        @Flag(help: "Run until stopped (clears the duration).")
        var forever = false

        @Option(help: ArgumentHelp("The sound played before scheduled clips: a clip id or a file in the clips folder.", valueName: "ID"))
        var cue: String?

        @Flag(help: "Play no cue.")
        var noCue = false

        func validate() throws {
            if always, !active.isEmpty { throw ValidationError("give --always or --active, not both") }
            if forever, duration != nil { throw ValidationError("give --duration or --forever, not both") }
            if noCue, cue != nil { throw ValidationError("give --cue or --no-cue, not both") }
            if let every, every.split(separator: "-").count != 2 { throw ValidationError("--every takes MIN-MAX, such as 45s-3m") }
            for window in active { _ = try Windows.parse(window) }
        }

        func run() throws {
            var params: [String: JSONDocument] = [:]
            if let every {
                let ends = every.split(separator: "-").map(String.init)
                params["interval"] = .object(["min": .string(ends[0]), "max": .string(ends[1])])
            }
            if !active.isEmpty { params["activeHours"] = .array(active.compactMap { try? Windows.parse($0) }) }
            if always { params["activeHours"] = .array([]) }
            if let duration { params["duration"] = .string(duration) }
            if forever { params["duration"] = .null }
            if let cue { params["cue"] = .string(cue) }
            if noCue { params["cue"] = .null }
            guard !params.isEmpty else { throw ValidationError("say what to change: --every, --active, --always, --duration, --forever, --cue or --no-cue") }
            try options.edit("updateSchedule", revision.adding(to: params)) { _ in "schedule changed" }
        }
    }
}
