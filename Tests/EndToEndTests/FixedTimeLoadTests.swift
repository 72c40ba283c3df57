import Foundation
import JukeboxProtocol
import JukeboxTestSupport
import Testing

/// Fixed times with the built daemon: many times that never come, and times in the hour the
/// clocks skip.
@Suite("Fixed times under load and at a clock change", .timeLimit(.minutes(2)))
struct FixedTimeLoadTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }
    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("water.wav", WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 800, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1))
    }

    /// 200 clips of 100 times each, every day a holiday and every time kept off holidays:
    /// `next` took 36 s (the CLI gives up at 10), and the idle daemon used 37 % of a core
    /// working the same 400 days out every minute. A session has at most 2 000 times in all,
    /// and each time's next moment is worked out once: `next` answers, and so does a clip
    /// that does come.
    @Test func twoThousandTimesThatNeverComeLeaveNextAnswering() async throws {
        let times = (0..<99).map { #"{"time":"\#(String(format: "%02d:%02d", $0 * 14 / 60, $0 * 14 % 60))","except":["holidays"]}"# }.joined(separator: ",")
        let clips = (0..<20).map { #"{"file":"water.wav","id":"c\#($0)","at":[\#(times)]}"# }.joined(separator: ",\n")
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "holidays": ["01-01..12-31"],
              "clips": [ \(clips),
                { "file": "water.wav", "id": "bell", "at": ["12:00"] } ] }
            """)
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: ["TZ": "UTC"]) { [self] _ in
            try await (jukebox("--json", "next"), jukebox("--json", "next"))
        }
        for next in [run.result.0, run.result.1] {
            #expect(next.status == 0, "\(next.stderr)")
            let result = try JSONDecoder().decode(NextResult.self, from: Data(next.stdout.utf8))
            #expect(!result.fixedTimes.isEmpty && result.fixedTimes.allSatisfy { $0.clip == "bell" }, "\(result.fixedTimes)")
        }
    }

    /// With a zone whose clocks jump forward, a clip with three times in the skipped hour was
    /// queued three times at the moment the clocks landed, while `next` listed it once. It
    /// plays once. The zone is a POSIX `TZ` rule whose change comes 25 s after the test
    /// begins.
    @Test func threeTimesInTheSkippedHourPlayOnce() async throws {
        // Standard time is UTC; summer time (an hour on) begins at `change`: far enough ahead
        // that a daemon slow to start beside the whole suite is still asked before it.
        let change = Int(Date().timeIntervalSince1970) + 25
        let seconds = change % 86_400
        let day = Calendar(identifier: .gregorian).ordinality(of: .day, in: .year, for: Date(timeIntervalSince1970: Double(change)))!
        let clock = String(format: "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
        // A day of year in Jn form never counts 29 February.
        let leap = Calendar(identifier: .gregorian).range(of: .day, in: .year, for: Date(timeIntervalSince1970: Double(change)))!.count == 366
        let julian = leap && day > 59 ? day - 1 : day
        let zone = "XST0XDT,J\(julian)/\(clock),J\((julian + 29) % 365 + 1)/00:00:00"
        // Three whole minutes within the hour that is skipped.
        let first = (seconds / 60 + 1) % 1440
        let times = (0..<3).map { (step: Int) -> String in
            let minute: Int = (first + step * 10) % 1440
            return String(format: "\"%02d:%02d\"", minute / 60, minute % 60)
        }
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "water.wav", "id": "bell", "at": [\(times.joined(separator: ", "))] } ] }
            """)
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: ["TZ": zone]) { [self] log in
            let next = try JSONDecoder().decode(NextResult.self, from: Data(try await jukebox("--json", "next").stdout.utf8))
            #expect(next.fixedTimes.filter { $0.at == Double(change) }.count == 1, "\(zone): \(next.fixedTimes)")
            #expect(await log.waitFor("bell: its time"))
            // Anything more it would queue for that moment is queued with it.
            return try await jukebox("status").status
        }
        let queued = run.lines.filter { $0.contains("bell: its time") }
        #expect(queued.count == 1, "\(zone), \(times): \(queued)")
        #expect(run.status == 0)
    }
}
