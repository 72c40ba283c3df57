import Foundation
import JukeboxTestSupport
import Testing

/// `say` with the built daemon and the real espeak-ng: heard in its place in the queue on the
/// paced rig, kept across a restart, and an engine that is missing, hangs or is given hostile
/// text failing only its own entry.
@Suite("Announcements", .serialized, .timeLimit(.minutes(2)), .enabled(if: Espeak.isInstalled, Comment(rawValue: Espeak.missing)))
struct AnnouncementTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }
    var output: String { folder.file("out.raw") }
    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "file:FILE=\(output),FORMAT=raw", "--log-level", "debug"] }
    static let hostile = #"$(touch pwned) `touch pwned2` 'q' "dq"; touch pwned3"#

    init() throws {
        folder = try TemporaryDirectory()
        let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 4000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
        try folder.write("water.wav", tone)
    }

    func session(tts: String? = nil) throws {
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }\(tts.map { ", \"tts\": \($0)" } ?? ""), "clips": [ { "file": "water.wav" } ] }
            """)
    }

    /// The speech files the daemon made (`state.speech/`).
    func speechFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.file("state.speech"))) ?? []).map { folder.file("state.speech/\($0)") }
    }

    @Test(.enabled(if: PulseRig.isInstalled, Comment(rawValue: PulseRig.missing)))
    func anAnnouncementIsHeardBetweenTheClipsBeforeAndAfterIt() async throws {
        let tones: [Double] = [3000, 4500]
        for (index, frequency) in tones.enumerated() {
            let samples = WAVFile.tone(frequency: frequency, frames: 22_050, rate: 44_100, channels: 2)
            try folder.write("c\(index).wav", WAVFile.bytes(samples, encoding: .s16, rate: 44_100, channels: 2))
        }
        try folder.write("s.json", text: """
            { "device": "pulse", "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "c0.wav" }, { "file": "c1.wav" } ] }
            """)
        let rig = PulseRig(folder: folder)
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--log-level", "debug"]
        try await rig.with {
            try await rig.startCapture()
            _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                // Held until all three are queued, so they play back to back.
                #expect(try await jukebox("pause").status == 0)
                #expect(try await jukebox("play", "c0").status == 0)
                let said = try await jukebox("say", "Dinner is ready")
                #expect(said.status == 0 && said.stdout.contains("say: Dinner is ready (position 2)"), "\(said)")
                #expect(try await jukebox("play", "c1").status == 0)
                #expect(try await jukebox("resume").status == 0)
                #expect(await log.waitUntil { lines in
                    guard let last = lines.firstIndex(where: { $0.contains("played c1") }) else { return false }
                    return lines[last...].contains { $0.contains("pulse drained") }
                })
            }
            try await rig.stopCapture()
        }
        let capture = try rig.capture(frequencies: tones)
        let segments = capture.segments
        #expect(segments.map(\.frequency) == tones, "\(segments)")
        guard segments.count == 2 else { return }
        // The speech: sound that is neither tone, after the first clip and before the second.
        let between = capture.sound[segments[0].end..<segments[1].start]
        let spoken = try #require(speechFiles().first)
        let seconds = Double(try Data(contentsOf: URL(fileURLWithPath: spoken)).count - 44) / 2 / 22_050
        let gap = Double(between.count) / 100
        #expect(gap >= seconds - 0.05 && gap <= seconds + 0.5, "the gap (\(gap) s) holds the whole announcement (\(seconds) s)")
        #expect(Double(between.filter { $0 }.count) / 100 >= seconds / 2, "it is heard: \(between.filter { $0 }.count) windows of sound")
        let before = capture.sound[..<segments[0].start]
        let after = capture.sound[segments[1].end...]
        #expect(!before.dropLast(2).contains(true) && !after.dropFirst(2).contains(true), "no sound outside the three")
    }

    @Test func theTextIsNeverSeenByAShellAndTheAnnouncementOutlivesARestart() async throws {
        try session(tts: #"["espeak-ng", "-w", "{out}", "{text}"]"#)
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            #expect(try await jukebox("pause").status == 0)
            let said = try await jukebox("say", Self.hostile)
            #expect(said.status == 0, "\(said)")
            #expect(await log.waitFor("made the announcement"))
        }
        #expect(speechFiles().count == 1, "made while paused, ahead of its turn")
        // After a restart it is still queued, and plays.
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            let queue = try await jukebox("queue")
            #expect(queue.stdout.contains("say: $(touch pwned)"), "\(queue.stdout)")
            #expect(try await jukebox("resume").status == 0)
            #expect(await log.waitFor("played say"))
        }
        #expect(!run.lines.contains { $0.contains("made the announcement") }, "the cached audio was used")
        for name in ["pwned", "pwned2", "pwned3"] {
            #expect(!FileManager.default.fileExists(atPath: folder.file(name)) && !FileManager.default.fileExists(atPath: name), "\(name) was made")
        }
        #expect(try folder.read("out.raw").count > 20_000, "the speech was written to the device")
    }

    @Test func aMissingOrHangingEngineFailsItsEntryWithTheReasonAndTheQueueGoesOn() async throws {
        try session(tts: #"{ "command": ["/bin/sh", "-c", "sleep 30", "sh", "{out}"], "timeLimit": "1s" }"#)
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            #expect(try await jukebox("pause").status == 0)
            #expect(try await jukebox("say", "Dinner is ready").status == 0)
            #expect(try await jukebox("play", "water").status == 0)
            #expect(try await jukebox("resume").status == 0)
            #expect(await log.waitFor("played water"))
            // The engine's home changes; a reload takes it in.
            try session(tts: #"["/nonexistent/piper", "--output_file", "{out}"]"#)
            #expect(try await jukebox("reload").status == 0)
            #expect(try await jukebox("say", "Dinner is ready", "--client", "kitchen").status == 0)
            #expect(try await jukebox("play", "water").status == 0)
            #expect(await log.waitUntil { $0.filter { $0.contains("played water") }.count == 2 })
            let history = try await jukebox("history")
            #expect(history.stdout.contains("say: Dinner is ready  failed: the speech engine /bin/sh took longer than 1s and was stopped (tts.timeLimit)"), "\(history.stdout)")
            #expect(history.stdout.contains("/nonexistent/piper could not be started: no such file"), "\(history.stdout)")
            #expect(history.stdout.contains("apt install espeak-ng"), "\(history.stdout)")
        }
        #expect(try folder.read("out.raw").count == 16_000, "the clip after each played whole")
        #expect(speechFiles().isEmpty, "nothing half-made is left")
    }

    @Test func textThatIsEmptyOrTooLongIsRefusedByName() async throws {
        try session()
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { _ in
            let empty = try await jukebox("say", "  ")
            #expect(empty.status == 64 && empty.stderr.contains("give the text to say"), "\(empty)")
            let long = try await jukebox("say", String(repeating: "a", count: 1001))
            #expect(long.status != 0 && long.stderr.contains("the text to say is longer than 1000 characters"), "\(long)")
            let longest = try await jukebox("pause", "--json")
            #expect(longest.status == 0)
            let fits = try await jukebox("say", String(repeating: "a", count: 1000))
            #expect(fits.status == 0, "\(fits)")
        }
    }
}

enum Espeak {
    static let isInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/espeak-ng")
    static let missing = "espeak-ng is not installed (apt install espeak-ng); CI installs it"
}
