import Glibc
import JukeboxProtocol

/// Short human forms for the client's output.
enum Format {
    /// `m:ss` or `h:mm:ss`.
    static func clock(_ seconds: Double) -> String {
        // Checked before it becomes an Int: an out-of-range double would trap.
        guard seconds.isFinite, seconds >= 0, seconds < 1e12 else { return "?" }
        let total = Int(seconds.rounded(.down))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        let secondsText = (rest < 10 ? "0" : "") + "\(rest)"
        if hours > 0 { return "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes):" + secondsText }
        return "\(minutes):" + secondsText
    }

    /// A place in a clip: `clock`, with tenths of a second when there are any (`0:00.5`, where
    /// a clip cut half a second in goes on from).
    static func position(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 1e12 else { return "?" }
        let tenths = Int((seconds * 10).rounded()) % 10
        let whole = (seconds * 10).rounded() / 10
        return clock(whole) + (tenths == 0 ? "" : ".\(tenths)")
    }

    /// Rows in columns two spaces apart, each as wide as its widest cell (counted in
    /// characters); the last cell of a row is never padded.
    static func columns(_ rows: [[String]]) -> String {
        var widths: [Int] = []
        for row in rows {
            for (index, cell) in row.enumerated().dropLast() {
                if index >= widths.count { widths.append(0) }
                widths[index] = max(widths[index], cell.count)
            }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `45s`, `3m`, `1h30m`, `0.25s`: a duration as a session file writes it.
    static func seconds(_ seconds: Double) -> String {
        guard seconds == seconds.rounded(), seconds >= 1, seconds < 1e12 else { return "\(seconds)s" }
        return DurationWords.text(seconds: Int64(seconds))
    }

    /// Local `HH:MM:SS` for an epoch time.
    static func time(_ epochSeconds: Double) -> String {
        var seconds = time_t(epochSeconds)
        var fields = tm()
        localtime_r(&seconds, &fields)
        func two(_ value: Int32) -> String { (value < 10 ? "0" : "") + "\(value)" }
        return "\(two(fields.tm_hour)):\(two(fields.tm_min)):\(two(fields.tm_sec))"
    }

    /// The weekday of a `YYYY-MM-DD` date, `Mon` to `Sun`; `   ` for what is no date.
    static func weekday(_ date: String) -> String {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return "   " }
        // Days since 1970-01-01 (Hinnant's days_from_civil); that day was a Thursday.
        let (year, month, day) = (parts[0], parts[1], parts[2])
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let days = era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
        let names = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        return names[((days % 7) + 7) % 7]
    }

    /// Local `HH:MM` for a moment today, `YYYY-MM-DD HH:MM` for one on another day.
    static func moment(_ epochSeconds: Double, now: Double = Double(Glibc.time(nil))) -> String {
        guard epochSeconds.isFinite, abs(epochSeconds) < 1e12 else { return "?" }
        func fields(_ epoch: Double) -> tm {
            var seconds = time_t(epoch)
            var fields = tm()
            localtime_r(&seconds, &fields)
            return fields
        }
        let when = fields(epochSeconds), today = fields(now)
        func two(_ value: Int32) -> String { (value < 10 ? "0" : "") + "\(value)" }
        let clock = "\(two(when.tm_hour)):\(two(when.tm_min))"
        if when.tm_year == today.tm_year, when.tm_yday == today.tm_yday { return clock }
        return "\(when.tm_year + 1900)-\(two(when.tm_mon + 1))-\(two(when.tm_mday)) \(clock)"
    }

    /// An alert on: `lockdown, on since 14:02 (started by pi, sounded 3 times)`.
    static func alertOn(_ info: AlertInfo) -> String {
        "\(info.name), on since \(moment(info.since)) (started by \(info.by), sounded \(info.soundings == 1 ? "once" : "\(info.soundings) times"))"
    }

    /// The answer to `alert`: what was started or ended, what is on, and the session's alerts.
    static func alert(_ result: AlertResult) -> String {
        var lines: [String] = []
        switch (result.alert, result.ended) {
        case (let on?, let replaced?): lines.append("alert \(on.name) started, in place of \(replaced.name)")
        case (nil, let ended?): lines.append("alert \(ended.name) ended, after sounding \(ended.soundings == 1 ? "once" : "\(ended.soundings) times")")
        default: break
        }
        lines.append("alert:  \(result.alert.map(alertOn) ?? "none on")")
        lines.append("alerts: \(result.alerts.isEmpty ? "none in the session (see docs/alerts.md)" : result.alerts.joined(separator: ", "))")
        return lines.joined(separator: "\n")
    }

    /// Whether it is quiet, why and until when: `quiet by hand until 14:30`.
    static func quiet(_ info: QuietInfo) -> String {
        var text = info.quiet ? (info.byHand ? "quiet by hand" : "quiet hours") : (info.byHand ? "quiet hours lifted by hand" : "not quiet")
        switch (info.quiet, info.until) {
        case (true, let until?): text += " until \(moment(until))"
        case (true, nil): text += info.byHand ? " until turned off" : ""
        case (false, let until?): text += info.byHand ? " until \(moment(until))" : "; quiet hours begin \(moment(until))"
        case (false, nil): break
        }
        if let held = info.held, held > 0 { text += "; \(held) held until quiet ends" }
        return text
    }

    /// The music bed: `on, music playing, lowered under a clip (/run/jukeboxd/bed)`.
    static func bed(_ info: BedInfo) -> String {
        var parts = [info.on ? "on" : "off"]
        if let problem = info.problem {
            parts.append("cannot read the pipe: \(problem)")
        } else {
            parts.append(info.music == "playing" ? "music playing" : "no music coming in")
        }
        if info.ducked { parts.append("lowered under a clip") }
        return parts.joined(separator: ", ") + " (\(info.pipe))"
    }

    /// ` now` for an urgent entry; ` cut, goes on from 0:12` (or `from its start`) for one
    /// an urgent entry cut; ` at volume 40` and ` for 10s` for one asked for at a volume of
    /// its own or to stop early.
    /// `ended`: the entry has finished, so where it would have gone on from is no longer said.
    static func details(_ entry: EntryInfo, ended: Bool = false) -> String {
        var text = entry.now == true ? " now" : ""
        if !ended, let resumeAt = entry.resumeAt { text += resumeAt > 0 ? " cut, goes on from \(position(resumeAt))" : " cut, plays again from its start" }
        if let volume = entry.volume { text += " at volume \(volume)" }
        if let stopAfter = entry.stopAfter { text += " for \(seconds(stopAfter))" }
        return text
    }

    /// `played a 1 s test tone through "pulse" (44100 Hz, s16, 2 channels): it took 1.08 s,
    /// as a sound card plays it; if nothing was heard, …`.
    static func soundTest(_ test: SoundTestResult) -> String {
        let converted = test.deviceFormat.map { ", converted to the device's \($0)" } ?? ""
        let took = test.took < 1 ? "\(Int((test.took * 1000).rounded())) ms" : "\((test.took * 100).rounded() / 100) s"
        let opened = "played a \(seconds(test.seconds)) test tone through \"\(test.device)\" (\(test.format)\(converted)): it took \(took)"
        return test.realTime
            ? "\(opened), as a sound card plays it. If nothing was heard: check the speaker's power, cable and volume (alsamixer), and that this is the card it is plugged into (aplay -L)"
            : "\(opened), faster than it plays: \"\(test.device)\" is not a sound card (a null or file device), so nothing is heard. Choose the card the speaker is on (aplay -L lists them)"
    }

    static func event(_ event: Notification) -> String {
        let params = event.params
        var text = event.method
        if let entry = params?.entry { text += " \(entry.ticket) \(entry.shown)" }
        if let position = params?.entry?.position { text += " (position \(position))" }
        if let outcome = params?.outcome { text += " \(outcome)" }
        if let reason = params?.reason { text += ": \(reason)" }
        if let tickets = params?.tickets { text += " " + tickets.map(String.init).joined(separator: " ") }
        if let next = params?.nextPick { text += " next pick at \(time(next))" }
        if let state = params?.state { text += " \(state)" }
        if let session = params?.session { text += " \"\(session)\" (\(params?.clips ?? 0) clips)" }
        if let volume = params?.volume { text += " \(volume)" }
        if params?.entry?.afterQuiet == true { text += " until quiet ends" }
        if let entry = params?.entry { text += details(entry, ended: event.method == "finished") }
        if let quiet = params?.quiet { text += " " + Self.quiet(quiet) }
        if let players = params?.players { text += " " + players.joined(separator: ", ") }
        if let alert = params?.alert { text += ": " + alertOn(alert) }
        return text
    }
}

/// One line on stderr.
func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

/// Unbuffered stdout lines, so `jukebox watch | ...` sees each event as it happens.
enum Output {
    static func line(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }
}

