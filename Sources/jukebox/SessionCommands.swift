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

    @Option(name: .customLong("window"), help: ArgumentHelp("When it may be picked: HH:MM-HH:MM, with @mon,tue… for some days only; a sun time with an offset takes .. between the ends (sunset-30m..23:00); repeat for more windows.", valueName: "FROM-TO[@days]"))
    var windows: [String] = []

    @Option(name: .customLong("at"), help: ArgumentHelp("A fixed time to play it at: 07:55, 07:55@mon-fri, *:00 (every hour) or sunset-15m; repeat for more.", valueName: "TIME[@days]"))
    var at: [String] = []

    @Option(name: .customLong("date"), help: ArgumentHelp("Only on these dates: 2026-04-05, 12-25 (every year) or 12-24..01-06; repeat for more.", valueName: "DATE"))
    var dates: [String] = []

    @Option(name: .customLong("except"), help: ArgumentHelp("Never on these dates, or `holidays` (the session's list); repeat for more.", valueName: "DATE"))
    var except: [String] = []

    func validate() throws {
        for window in windows { _ = try Windows.parse(window) }
    }

    /// The fields as the session file writes them.
    var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        if let title { fields["title"] = .string(title) }
        if let weight { fields["weight"] = .number(Double(weight)) }
        if let gain { fields["gain"] = .number(gain) }
        if !windows.isEmpty { fields["windows"] = .array(windows.compactMap { try? Windows.parse($0) }) }
        if !at.isEmpty { fields["at"] = .array(at.map { .string($0) }) }
        if !dates.isEmpty { fields["dates"] = .array(dates.map { .string($0) }) }
        if !except.isEmpty { fields["except"] = .array(except.map { .string($0) }) }
        return fields
    }
}

/// `--if-revision`: refuse the edit if the session changed since the revision a script read.
struct RevisionOption: ParsableArguments {
    @Option(help: ArgumentHelp("Refuse the edit if the session is no longer at this revision (from `jukebox session`).", valueName: "REVISION"))
    var ifRevision: String?

    func adding(to params: [String: JSONValue]) -> [String: JSONValue] {
        var params = params
        if let ifRevision { params["ifRevision"] = .string(ifRevision) }
        return params
    }
}

/// `HH:MM-HH:MM[@mon,tue]`, or `FROM..TO` where an end is a sun time with an offset
/// (`sunset-30m..23:00`), as a window object of the session file. The times are checked by
/// jukeboxd, like everything in the file; only the shape is checked here.
enum Windows {
    static func parse(_ text: String) throws -> JSONValue {
        let (span, days) = text.firstIndex(of: "@").map { (text[..<$0], Optional(text[text.index(after: $0)...])) } ?? (Substring(text), nil)
        let ends = span.contains("..") ? span.split(separator: "..", omittingEmptySubsequences: false) : span.split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2, !ends[0].isEmpty, !ends[1].isEmpty else {
            throw ValidationError("\"\(text)\" is not a window: write HH:MM-HH:MM, with @mon,tue… for some days only; where an end has an offset, put .. between the ends, such as sunset-30m..23:00")
        }
        var window: [String: JSONValue] = ["from": .string(String(ends[0])), "to": .string(String(ends[1]))]
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
    func edit(_ method: String, _ params: [String: JSONValue], done: @escaping (EditResult) -> String) throws {
        try run(method, params, as: EditResult.self) { result in
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
                ]
                let document: [String: JSONValue] = if case .object(let fields) = result.document { fields } else { [:] }
                if case .array(let steps)? = document["volume"] {
                    lines[lines.count - 1] = "volume:    " + steps.map { step in
                        guard case .object(let step) = step, case .string(let from)? = step["from"], case .number(let level)? = step["level"] else { return "?" }
                        return "from \(from) \(Int((level * 100).rounded()))"
                    }.joined(separator: ", ")
                }
                if case .number(let cap)? = document["maxVolume"] { lines.append("max volume: \(Int((cap * 100).rounded()))") }
                if case .object(let place)? = document["location"], case .number(let latitude)? = place["latitude"], case .number(let longitude)? = place["longitude"] {
                    lines.append("location:  \(latitude),\(longitude)")
                }
                if let quiet = document["quiet"] { lines.append("quiet:     \(Self.windows(quiet))") }
                if let holidays = document["holidays"] { lines.append("holidays:  \(Self.list(holidays))") }
                if let grace = document["atGrace"] { lines.append("at grace:  \(Self.list(grace))") }
                lines.append("clips:     \(session.clips)")
                if case .array(let clips)? = document["clips"] {
                    for clip in clips { lines.append("  " + Self.describe(clip)) }
                }
                return lines.joined(separator: "\n")
            }
        }

        /// One clip as the file has it: `eyes  eyes.wav  "Rest your eyes"  weight 2  09:00-18:00`.
        static func describe(_ clip: JSONValue) -> String {
            guard case .object(let fields) = clip else { return "?" }
            func text(_ key: String) -> String? { if case .string(let value)? = fields[key] { value } else { nil } }
            let file = text("file") ?? "?"
            var parts = [text("id") ?? String(file.split(separator: "/").last?.split(separator: ".").first ?? "?"), file]
            if let title = text("title") { parts.append("\"\(title)\"") }
            if case .number(let weight)? = fields["weight"] { parts.append("weight \(Int(exactly: weight).map(String.init) ?? "\(weight)")") }
            if case .number(let gain)? = fields["gain"] { parts.append("gain \(gain) dB") }
            if let windows = fields["windows"] { parts.append(Self.windows(windows)) }
            if let at = fields["at"] { parts.append("at " + list(at)) }
            if let dates = fields["dates"] { parts.append("dates " + list(dates)) }
            if let except = fields["except"] { parts.append("except " + list(except)) }
            if case .bool(false)? = fields["enabled"] { parts.append("disabled") }
            return parts.joined(separator: "  ")
        }

        /// Windows as the command line takes them: `09:00-18:00@mon,fri`, `sunset-30m..23:00`,
        /// with their dates.
        static func windows(_ value: JSONValue) -> String {
            guard case .array(let windows) = value else { return list(value) }
            return windows.map { window in
                guard case .object(let window) = window, case .string(let from)? = window["from"], case .string(let to)? = window["to"] else { return "?" }
                var text = from.contains("-") || to.contains("-") ? "\(from)..\(to)" : "\(from)-\(to)"
                if case .array(let days)? = window["days"] { text += "@" + days.map { if case .string(let day) = $0 { day } else { "?" } }.joined(separator: ",") }
                if let dates = window["dates"] { text += " dates " + list(dates) }
                if let except = window["except"] { text += " except " + list(except) }
                return text
            }.joined(separator: ", ")
        }

        /// A list of strings, or a `{"time": …}` object's time, joined with commas.
        static func list(_ value: JSONValue) -> String {
            switch value {
            case .string(let text): return text
            case .number(let number): return Int(exactly: number).map(String.init) ?? "\(number)"
            case .array(let items): return items.map(list).joined(separator: ", ")
            case .object(let fields):
                guard let time = fields["time"] else { return "{…}" }
                var text = list(time)
                if let dates = fields["dates"] { text += " dates " + list(dates) }
                if let except = fields["except"] { text += " except " + list(except) }
                return text
            default: return "?"
            }
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
                    let (result, _) = try client.call("addClip", revision.adding(to: params), as: EditResult.self)
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

        @Flag(help: "Clear the clip's fixed times.")
        var noAt = false

        @Flag(help: "Clear the clip's dates and exceptions: every day.")
        var everyDay = false

        func validate() throws {
            if always, !clip.windows.isEmpty { throw ValidationError("give --always or --window, not both") }
            if noAt, !clip.at.isEmpty { throw ValidationError("give --at or --no-at, not both") }
            if everyDay, !clip.dates.isEmpty || !clip.except.isEmpty { throw ValidationError("give --every-day or --date and --except, not both") }
        }

        func run() throws {
            var params = clip.fields
            params["id"] = .string(id)
            if let file { params["file"] = .string(file) }
            if always { params["windows"] = .array([]) }
            if noAt { params["at"] = .null }
            if everyDay {
                params["dates"] = .null
                params["except"] = .null
            }
            guard params.count > 1 else { throw ValidationError("say what to change: --title, --weight, --gain, --window, --always, --at, --no-at, --date, --except, --every-day or --file") }
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

        @Option(help: ArgumentHelp("Quiet hours, when nothing the daemon starts by itself plays: HH:MM-HH:MM[@days], or FROM..TO with sun times; repeat for more.", valueName: "FROM-TO[@days]"))
        var quiet: [String] = []

        @Flag(help: "No quiet hours.")
        var noQuiet = false

        @Option(help: ArgumentHelp("Where sun times are worked out for: degrees north and east, such as 52.37,4.89 (negative for south and west).", valueName: "LAT,LON"))
        var location: String?

        @Option(name: .customLong("holiday"), help: ArgumentHelp("The session's holidays, which `--except holidays` leaves out: 2026-04-05, 12-25 or 12-24..01-06; repeat for more (replaces the list).", valueName: "DATE"))
        var holidays: [String] = []

        @Flag(help: "No holidays.")
        var noHolidays = false

        @Option(help: ArgumentHelp("How late a fixed time may still play after a short outage, 0s to 1h (default 2m).", valueName: "DURATION"))
        var atGrace: String?

        @Option(help: ArgumentHelp("The volume, 0 to 1; or a step of a volume schedule, FROM=LEVEL such as 07:00=0.8 or sunset=0.4, repeated for each step.", valueName: "LEVEL|FROM=LEVEL"))
        var volume: [String] = []

        func validate() throws {
            if noQuiet, !quiet.isEmpty { throw ValidationError("give --quiet or --no-quiet, not both") }
            _ = try Self.volume(volume)
            if noHolidays, !holidays.isEmpty { throw ValidationError("give --holiday or --no-holidays, not both") }
            for window in quiet { _ = try Windows.parse(window) }
            if let location { _ = try Self.location(location) }
            if always, !active.isEmpty { throw ValidationError("give --always or --active, not both") }
            if forever, duration != nil { throw ValidationError("give --duration or --forever, not both") }
            if noCue, cue != nil { throw ValidationError("give --cue or --no-cue, not both") }
            if let every, every.split(separator: "-").count != 2 { throw ValidationError("--every takes MIN-MAX, such as 45s-3m") }
            for window in active { _ = try Windows.parse(window) }
        }

        func run() throws {
            var params: [String: JSONValue] = [:]
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
            if !quiet.isEmpty { params["quiet"] = .array(quiet.compactMap { try? Windows.parse($0) }) }
            if noQuiet { params["quiet"] = .null }
            if let location { params["location"] = try Self.location(location) }
            if !holidays.isEmpty { params["holidays"] = .array(holidays.map { .string($0) }) }
            if noHolidays { params["holidays"] = .null }
            if let atGrace { params["atGrace"] = .string(atGrace) }
            if let volume = try Self.volume(volume) { params["volume"] = volume }
            guard !params.isEmpty else {
                throw ValidationError("say what to change: --every, --active, --always, --duration, --forever, --cue, --no-cue, --quiet, --no-quiet, --location, --holiday, --no-holidays, --at-grace or --volume")
            }
            try options.edit("updateSchedule", revision.adding(to: params)) { _ in "schedule changed" }
        }

        /// `0.6`, or steps `07:00=0.8 20:00=0.4`, as the session's `volume`; nil for none. The
        /// levels' range and the times are checked by jukeboxd.
        static func volume(_ values: [String]) throws -> JSONValue? {
            guard !values.isEmpty else { return nil }
            if values.count == 1, !values[0].contains("="), let level = Double(values[0]) { return .number(level) }
            return .array(try values.map { value in
                let parts = value.split(separator: "=", omittingEmptySubsequences: false)
                guard parts.count == 2, !parts[0].isEmpty, let level = Double(parts[1]) else {
                    throw ValidationError("\"\(value)\" is not a volume: give one level such as 0.6, or steps such as --volume 07:00=0.8 --volume 20:00=0.4")
                }
                return .object(["from": .string(String(parts[0])), "level": .number(level)])
            })
        }

        /// `52.37,4.89` as the session's `location`; the range is checked by jukeboxd.
        static func location(_ text: String) throws -> JSONValue {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Double(String($0.filter { $0 != " " })) }
            guard parts.count == 2, let latitude = parts[0], let longitude = parts[1] else {
                throw ValidationError("\"\(text)\" is not a place: write degrees north and east, such as 52.37,4.89")
            }
            return .object(["latitude": .number(latitude), "longitude": .number(longitude)])
        }
    }
}
