import ArgumentParser
import FoundationEssentials
import Glibc
import JukeboxProtocol

extension JukeboxCLI {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Session, device, what plays, queue length, volume, next pick.")
        @OptionGroup var options: ClientOptions

        func run() throws { try Self.run(options.settings) }

        static func run(_ options: ClientSettings) throws {
            try options.run("status", as: StatusResult.self) { status in
                var bed: [String] = status.bed.map { ["bed:       \(Format.bed($0))"] } ?? []
                if let plan = status.plan { bed.append("plan:      \(plan.plan ?? "none") today (\(plan.why))") }
                bed += (status.calendars ?? []).map { "calendar:  \(Plan.calendarLine($0))" }
                // An alert on comes first: it is what matters most.
                let alert: [String] = status.alert.map { ["ALERT:     \(Format.alertOn($0))"] } ?? []
                let lines: [String] = alert + [
                    "session:   \(status.session)",
                    "device:    \(status.device) (\(status.deviceState))",
                    Self.playing(status),
                    "queue:     \(status.queueLength) waiting",
                    "volume:    \(status.volume)",
                    "next pick: \(status.nextPick.map(Format.time) ?? "none planned")",
                    "quiet:     \(status.quiet.map(Format.quiet) ?? "not quiet")",
                    "ducked:    \(status.ducked.map { $0.joined(separator: ", ") } ?? "nothing")",
                ] + bed + [
                    "uptime:    \(Format.clock(status.uptime))\(status.version.map { ", version \($0)" } ?? "")",
                    "played:    \(status.played), failed: \(status.failed), underruns: \(status.underruns ?? 0)",
                ]
                return lines.joined(separator: "\n")
            }
        }

        static func playing(_ status: StatusResult) -> String {
            if let waiting = status.waitingForDevice {
                return "playing:   nothing: \(waiting.ticket) \(waiting.shown) waits for the audio device"
            }
            return "playing:   \(status.playing.map { "\($0.ticket) \($0.shown)" } ?? "nothing")\(status.paused ? " (paused)" : "")"
        }
    }

    struct Health: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "health",
            abstract: "Say whether the daemon is doing its job: \"ok\", or the reason it is not (exit status 69).",
            discussion: """
                Unhealthy: the audio device missing for more than 2 minutes, the audio output stuck in one call, or the state not
                being saved. For cron or a monitoring agent: the exit status is 0 when healthy, 69 (EX_UNAVAILABLE) when not, and
                the daemon not answering exits as other commands do (69 as well).
                """)
        @OptionGroup var options: ClientOptions

        func run() throws {
            var healthy = true
            try options.run("health", as: HealthResult.self) { health in
                healthy = health.healthy
                guard health.healthy else { return "unhealthy: \(health.problem ?? "no reason given")" }
                return health.alert.map { "ok; the \($0) alert is on" } ?? "ok"
            }
            if !healthy { throw ExitCode(69) }
        }
    }

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test",
            abstract: "Play a one-second test tone through the session's device, or DEVICE, and say what was opened and whether it played.",
            discussion: """
                Through the session's own device the tone cuts in as an urgent clip would (the clip playing goes on after it);
                another device is opened for the tone alone. The answer names the device and the format it was opened for, and
                says whether it took the audio at the rate a sound card plays it. A device that cannot be opened says why: a
                wrong name (with what `aplay -L` lists), a busy device, missing permission. A device that does not answer is given up
                on after 30 s. DEVICE must be one `aplay -L` lists, or a card's hw:, plughw: or default: name; the session file
                may name any device. Exit status 69 when the tone did not play, 77 when DEVICE is not opened for a client, 75
                when another test is running.
                """)
        @OptionGroup var options: ClientOptions

        @Argument(help: "An ALSA device, as `aplay -L` lists them (default: the session's).")
        var device: String?

        func run() throws {
            let params: [String: JSONValue] = device.map { ["device": .string($0)] } ?? [:]
            // jukeboxd answers within its 30 s limit for a device that does not answer.
            try options.run("test", params, as: SoundTestResult.self, timeoutSeconds: 40) { Format.soundTest($0) }
        }
    }

    struct Plan: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "plan", abstract: "Show the day plans of the coming days and why each applies, or set a date's plan by hand.",
            discussion: """
                jukebox plan                      the coming 7 days: each date's plan, why, and its times
                jukebox plan --days 30            the coming 30 days (1 to 62)
                jukebox plan --from 2026-12-21    from another date
                jukebox plan set today none       today's plan by hand, say for a snow day
                jukebox plan set 2026-12-03 exam  a date's plan by hand (up to 400 days ahead)
                jukebox plan clear 2026-12-03     back to what the calendars and rules say
                A date is YYYY-MM-DD, today or tomorrow. A plan set by hand beats the calendars and
                the rules, and is kept across restarts until a week after its date.
                """)
        @OptionGroup var options: ClientOptions

        @Option(help: "How many days to show (1-62).")
        var days = 14

        @Option(help: "The first date to show (YYYY-MM-DD, today or tomorrow).")
        var from: String?

        @Argument(help: "set DATE PLAN, or clear DATE.")
        var words: [String] = []

        var request: (method: String, params: [String: JSONValue]) {
            get throws {
                switch words {
                case []:
                    var params: [String: JSONValue] = ["days": .number(Double(days))]
                    if let from { params["from"] = .string(from) }
                    return ("plan", params)
                case let words where words.count == 3 && words[0] == "set":
                    return ("setPlan", ["date": .string(words[1]), "plan": .string(words[2])])
                case let words where words.count == 2 && words[0] == "clear":
                    return ("setPlan", ["date": .string(words[1]), "plan": .null])
                default:
                    throw ValidationError("say `jukebox plan`, `jukebox plan set DATE PLAN` or `jukebox plan clear DATE`")
                }
            }
        }

        func validate() throws {
            if !(1...62).contains(days) { throw ValidationError("--days takes a number from 1 to 62") }
            _ = try request
        }

        func run() throws {
            let (method, params) = try request
            let settings = options.settings
            let client = try settings.connect()
            do {
                if method == "plan" {
                    let (result, _) = try client.call("plan", params, as: PlanResult.self)
                    if settings.json {
                        Output.line(ClientSettings.json(result))
                        return
                    }
                    // How the calendars were last read, from `status`.
                    let (status, _) = try client.call("status", [:], as: StatusResult.self)
                    let calendars = (status.calendars ?? []).map { "calendar \(Self.calendarLine($0))" }
                    Output.line(([Self.describe(result.days)] + calendars).joined(separator: "\n"))
                } else {
                    let (day, _) = try client.call(method, params, as: PlanDay.self)
                    Output.line(settings.json ? ClientSettings.json(day) : Self.describe([day]))
                }
            } catch {
                throw settings.fail(error)
            }
        }

        /// A line a date, and a line of its times under it when it has any.
        static func describe(_ days: [PlanDay]) -> String {
            var lines: [String] = []
            let width = max(days.map { ($0.plan ?? "none").count }.max() ?? 0, 4)
            for day in days {
                lines.append("\(Format.weekday(day.date)) \(day.date)  \((day.plan ?? "-").padding(width))  (\(day.why))")
                if !day.times.isEmpty {
                    lines.append("    " + day.times.map { "\($0.at) \($0.clip)" }.joined(separator: ", "))
                }
            }
            return lines.joined(separator: "\n")
        }

        /// `school: read 06:00`, and why the last read failed while it does.
        static func calendarLine(_ calendar: CalendarInfo) -> String {
            var line = "\(calendar.name): " + (calendar.readAt.map { "read \(Format.moment($0))" } ?? "not read yet since the start")
            if let problem = calendar.problem { line += "; the last read failed (\(calendar.failures) so far): \(problem)" }
            return line
        }
    }

    struct Next: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "next", abstract: "What will happen: the next fixed-time plays, the next random pick, quiet hours, and today's sun times.")
        @OptionGroup var options: ClientOptions

        @Option(name: .short, help: "How many fixed-time plays to show (1-100).")
        var n = 10

        func validate() throws {
            if !(1...100).contains(n) { throw ValidationError("-n takes a number from 1 to 100") }
        }


        func run() throws {
            try options.run("next", ["limit": .number(Double(n))], as: NextResult.self, human: Self.describe)
        }

        static func describe(_ next: NextResult) -> String {
            var lines: [String] = []
            if next.fixedTimes.isEmpty {
                lines.append("fixed times: none in the coming week")
            } else {
                lines.append("fixed times:")
                for play in next.fixedTimes {
                    let title = play.title == play.clip ? "" : " \"\(play.title)\""
                    let plan = play.plan.map { " (plan \($0))" } ?? ""
                    lines.append("  \(Format.moment(play.at))  \(play.clip)\(title)\(plan)\(play.quiet == true ? " (skipped: quiet)" : "")")
                }
            }
            var pick = next.nextPick.map { "at \(Format.moment($0))" + (next.pickSkipped == true ? " (skipped: \(next.pickSkippedFor == "quiet" ? "quiet" : "outside active hours"))" : "") } ?? "none planned"
            if let active = next.activeHours {
                let change = active.until.map { " until \(Format.moment($0))" } ?? ""
                pick += active.open ? " (active hours open\(change))" : " (outside active hours; they open \(active.until.map { Format.moment($0) } ?? "not this week"))"
            }
            lines.append("next pick:   \(pick)")
            lines.append("next play:   \(next.nextPlay.map { Format.moment($0) } ?? "nothing planned")")
            lines.append("quiet:       \(Format.quiet(next.quiet))")
            if let hours = next.quietHours {
                lines.append("quiet hours: \(Format.moment(hours.from)) to \(hours.to.map { Format.moment($0) } ?? "beyond a week")")
            }
            if let location = next.location, let sun = next.sun {
                lines.append("sun at \(location) today: " + sun.map { "\($0.event) \($0.time)" }.joined(separator: ", "))
            }
            return lines.joined(separator: "\n")
        }
    }

    struct Clips: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clips", abstract: "The session's clips: duration, window, plays, problems.")
        @OptionGroup var options: ClientOptions

        func run() throws { try Self.run(options.settings) }

        static func run(_ options: ClientSettings) throws {
            try options.run("clips", as: ClipsResult.self) { result in
                let rows = result.clips.map { clip -> [String] in
                    let when = !clip.enabled ? "disabled" : clip.randomPicks == false ? "only at its times" : clip.windowOpen ? "window open" : "window closed"
                    var row = [clip.id, "\"\(clip.title)\"", clip.duration.map { Format.clock($0) } ?? "-", when,
                               "played \(clip.timesPlayed)×" + (clip.lastPlayed.map { ", last \(Format.time($0))" } ?? "")]
                    if let problem = clip.problem { row.append("UNPLAYABLE: \(problem)") }
                    return row
                }
                return Format.columns(rows)
            }
        }
    }

    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "history", abstract: "Recently played clips, newest first, and how each ended.")
        @OptionGroup var options: ClientOptions

        @Option(name: .short, help: "How many plays to show.")
        var n = 20

        func validate() throws {
            if !(1...200).contains(n) { throw ValidationError("-n takes a number from 1 to 200") }
        }


        func run() throws {
            try options.run("history", ["limit": .number(Double(n))], as: HistoryResult.self) { result in
                if result.plays.isEmpty { return "nothing played yet" }
                return result.plays.map { play in
                    "\(Format.time(play.startedAt))  \(play.entry.shown)  \(play.outcome)" + (play.reason.map { ": \($0)" } ?? "")
                }.joined(separator: "\n")
            }
        }
    }

    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "watch", abstract: "Print events as they happen, until interrupted.")
        @OptionGroup var options: ClientOptions

        func run() throws {
            let client = try options.connect(timeoutSeconds: 0)
            do {
                _ = try client.call("subscribe", as: SubscribeResult.self)
                if !options.json { Output.line("watching jukeboxd at \(client.path) (Ctrl-C stops)") }
                while true {
                    let line = try client.readLine()
                    if options.json {
                        Output.line(String(decoding: line, as: UTF8.self))
                    } else if let event = Notification(line) {
                        Output.line(Format.event(event))
                    }
                }
            } catch {
                throw options.fail(error)
            }
        }
    }

    /// `jukebox web-ca`: where the web remote's certificate authority is, and its fingerprint
    /// to compare with what a phone shows when it is installed.
    struct WebCA: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "web-ca",
            abstract: "The web remote's certificate authority: its file and SHA-256 fingerprint, to trust it on a phone (see docs/web.md).")
        @OptionGroup var options: ClientOptions

        func run() throws {
            try options.run("webCA", as: WebCAResult.self, human: Self.describe)
        }

        static func describe(_ result: WebCAResult) -> String {
            [
                result.path,
                "SHA-256 \(result.fingerprint)",
                "valid until \(Format.moment(result.notAfter))",
                "server certificate for \(result.serverNames), valid until \(Format.moment(result.serverNotAfter))",
            ].joined(separator: "\n") + (result.replaced.map { "\nnote: \($0)" } ?? "")
        }
    }

    /// `jukebox loudness`: each clip's loudness and the gain that brings it to the session's target.
    struct Loudness: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "loudness",
            abstract: "Each clip's loudness (EBU R 128) and the gain that brings it to the session's \"loudness\" target.")
        @OptionGroup var options: ClientOptions

        func run() throws {
            try options.run("loudness", as: LoudnessResult.self, human: Self.describe)
        }

        static func describe(_ result: LoudnessResult) -> String {
            func number(_ value: Double, sign: Bool = false) -> String {
                let tenths = Int((abs(value) * 10).rounded())
                let text = "\(tenths / 10).\(tenths % 10)"
                return value < 0 && tenths > 0 ? "-" + text : (sign ? "+" : "") + text
            }
            guard let target = result.target else {
                return "target: none: clips play as recorded, and are not measured (set \"loudness\" in the session, such as -18)"
            }
            var lines = ["target: \(number(target)) LUFS, true peak at most -1.0 dBTP"]
            let width = result.clips.map(\.clip.count).max() ?? 0
            for clip in result.clips {
                let name = clip.clip.padding(width)
                guard clip.measured else { lines.append("\(name)  not measured yet"); continue }
                var text = clip.integrated.map { "\(number($0)) LUFS" } ?? "silent"
                if let peak = clip.truePeak { text += ", peak \(number(peak)) dBTP" }
                if let gain = clip.gain { text += ", plays at \(number(gain, sign: true)) dB" }
                lines.append("\(name)  \(text)")
            }
            return lines.joined(separator: "\n")
        }
    }
}

private extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
