import Foundation
import JukeboxTestSupport
import Subprocess
import Testing

/// The session's `loudness` target, end to end: clips recorded 28 dB apart play within 1 LU
/// of it, as ffmpeg's ebur128 filter hears the bytes the daemon sent to ALSA; a clip whose
/// peaks would pass −1 dBTP is held back; figures are measured once and kept; an upload is
/// measured before it is answered; `jukebox loudness` shows them.
@Suite("Loudness", .serialized, .timeLimit(.minutes(3)))
struct LoudnessTests: DaemonSuite {
    let folder: TemporaryDirectory
    static let rate = 48_000
    var socket: String { folder.file("c.sock") }

    init() throws {
        folder = try TemporaryDirectory()
        let frames = Self.rate * 3
        // A quiet recording, a loud one, and a quiet one with full-scale clicks in it.
        try folder.write("quiet.wav", WAVFile.bytes(WAVFile.tone(frequency: 440, frames: frames, rate: Self.rate, channels: 2, amplitude: 0.03), encoding: .s16, rate: Self.rate, channels: 2))
        try folder.write("loud.wav", WAVFile.bytes(WAVFile.tone(frequency: 660, frames: frames, rate: Self.rate, channels: 2, amplitude: 0.75), encoding: .s16, rate: Self.rate, channels: 2))
        var clicks = WAVFile.tone(frequency: 330, frames: frames, rate: Self.rate, channels: 2, amplitude: 0.02)
        for frame in stride(from: Self.rate / 4, to: frames, by: Self.rate / 2) { clicks[frame * 2] = 0.99 }
        try folder.write("clicks.wav", WAVFile.bytes(clicks, encoding: .s16, rate: Self.rate, channels: 2))
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "loudness": -18,
              "clips": [ { "file": "quiet.wav" }, { "file": "loud.wav" }, { "file": "clicks.wav" } ] }
            """)
    }

    /// Plays `clip` in a daemon of its own and returns the log and what ffmpeg hears in the
    /// bytes it sent to the device. `measured`: a log line to wait for before playing.
    func play(_ clip: String, waitingFor measured: String? = nil) async throws -> (lines: [String], heard: FFmpegLoudness.Figures) {
        let output = folder.file("\(clip).raw")
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "file:FILE=\(output),FORMAT=raw"]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] (log: LogLines) async throws in
            if let measured { #expect(await log.waitFor(measured)) }
            let played = try await jukebox("play", clip)
            #expect(played.status == 0)
            #expect(await log.waitFor("played \(clip)"))
        }
        #expect(run.status == 0)
        let heard = try await FFmpegLoudness.measure(["-f", "s16le", "-ar", "\(Self.rate)", "-ac", "2", "-i", output])
        return (run.lines, heard)
    }

    @Test func clipsRecorded28DBApartPlayAtTheTargetAndNothingPassesMinusOneDBTP() async throws {
        // The first start measures every clip; a clip plays at the target once measured.
        let quiet = try await play("quiet", waitingFor: "measured the loudness of 3 clips")
        #expect(abs(quiet.heard.integrated - -18) <= 1, "quiet.wav played at \(quiet.heard)")
        let recorded = try await FFmpegLoudness.measure(["-i", folder.file("quiet.wav")])
        let loudRecorded = try await FFmpegLoudness.measure(["-i", folder.file("loud.wav")])
        #expect(loudRecorded.integrated - recorded.integrated > 25, "the clips were recorded far apart: \(recorded), \(loudRecorded)")
        // Later starts use the figures kept beside the state: nothing is measured again.
        let loud = try await play("loud")
        #expect(abs(loud.heard.integrated - -18) <= 1, "loud.wav played at \(loud.heard)")
        #expect(!loud.lines.contains { $0.contains("measured the loudness") }, "\(loud.lines)")
        // The clicks would pass −1 dBTP at the target: the gain stops short of that.
        let clicks = try await play("clicks")
        #expect(clicks.heard.truePeak <= -0.8, "clicks.wav peaked at \(clicks.heard)")
        #expect(clicks.heard.integrated < -19, "held back below the target: \(clicks.heard)")
        // What `jukebox loudness` says.
        _ = try await DaemonProcess.withDaemon([folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"], ready: "control socket listening") { [self] _ in
            let shown = try await jukebox("loudness")
            #expect(shown.status == 0)
            let lines = shown.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "target: -18.0 LUFS, true peak at most -1.0 dBTP", "\(shown.stdout)")
            #expect(lines.contains { $0.hasPrefix("quiet ") && $0.contains(" LUFS, peak ") && $0.contains("dBTP, plays at +") }, "\(shown.stdout)")
            #expect(lines.contains { $0.hasPrefix("loud ") && $0.contains("plays at -") }, "\(shown.stdout)")
        }
        // A changed file is measured again.
        try folder.write("loud.wav", WAVFile.bytes(WAVFile.tone(frequency: 660, frames: Self.rate, rate: Self.rate, channels: 2, amplitude: 0.2), encoding: .s16, rate: Self.rate, channels: 2))
        let changed = try await play("loud", waitingFor: "measured the loudness of 1 clip")
        #expect(abs(changed.heard.integrated - -18) <= 1, "the changed loud.wav played at \(changed.heard)")
    }

    @Test func anUploadIsMeasuredBeforeItIsAnswered() async throws {
        let phone = try TemporaryDirectory()
        try phone.write("memo.wav", WAVFile.bytes(WAVFile.tone(frequency: 550, frames: Self.rate * 2, rate: Self.rate, channels: 2, amplitude: 0.05), encoding: .s16, rate: Self.rate, channels: 2))
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"]
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            #expect(try await jukebox("add", phone.file("memo.wav"), "--title", "Memo").status == 0)
            let shown = try await jukebox("--json", "loudness")
            let result = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
            let clips = try #require(result["clips"] as? [[String: Any]])
            let memo = try #require(clips.first { $0["clip"] as? String == "memo" }, "\(shown.stdout)")
            #expect(memo["measured"] as? Bool == true, "measured before the answer: \(memo)")
            let gain = try #require(memo["gain"] as? Double)
            #expect(gain > 5, "a quiet recording is brought up: \(memo)")
        }
    }

    /// A float file may hold NaN or ±Inf (a broken encoder, a corrupt file). It is measured as
    /// it is played, NaN as silence and ±Inf as full scale, so one bad sample neither makes a
    /// clip play 16 dB over the target nor breaks the report and the saved figures.
    @Test func aNaNOrAnInfiniteSampleIsMeasuredAsItIsPlayed() async throws {
        let tone = WAVFile.tone(frequency: 440, frames: Self.rate * 3, rate: Self.rate, channels: 2, amplitude: 0.03).map { Float($0) }
        var nan = tone, infinite = tone, late = tone
        nan[10] = .nan
        infinite[10] = .infinity
        late[tone.count / 2] = -.nan
        try folder.write("clean.wav", WAVFile.rawFloat32(tone, rate: Self.rate, channels: 2))
        try folder.write("nan.wav", WAVFile.rawFloat32(nan, rate: Self.rate, channels: 2))
        try folder.write("inf.wav", WAVFile.rawFloat32(infinite, rate: Self.rate, channels: 2))
        try folder.write("late.wav", WAVFile.rawFloat32(late, rate: Self.rate, channels: 2))
        try folder.write("f.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "loudness": -18,
              "clips": [ { "file": "clean.wav" }, { "file": "nan.wav" }, { "file": "inf.wav" }, { "file": "late.wav" } ] }
            """)
        let output = folder.file("nan.raw")
        let arguments = [folder.file("f.json"), "--socket", socket, "--state", folder.file("f-state.json"), "--device", "file:FILE=\(output),FORMAT=raw"]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] (log: LogLines) async throws in
            #expect(await log.waitFor("measured the loudness of 4 clips"))
            let shown = try await jukebox("--json", "loudness")
            #expect(shown.status == 0, "\(shown.stderr)")
            let result = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
            let clips = try #require(result["clips"] as? [[String: Any]])
            func gain(_ clip: String) throws -> Double {
                let figures = try #require(clips.first { $0["clip"] as? String == clip }, "\(shown.stdout)")
                #expect(figures["measured"] as? Bool == true, "\(figures)")
                return try #require(figures["gain"] as? Double, "\(figures)")
            }
            let clean = try gain("clean")
            #expect(clean > 10, "a quiet recording is brought up: \(clean)")
            #expect(abs(try gain("nan") - clean) < 0.1, "one NaN is one silent sample")
            #expect(abs(try gain("late") - clean) < 0.1, "a NaN mid-clip leaves the rest measured")
            // +Inf is a full-scale sample: the peak ceiling holds the gain at −1 dB.
            #expect(abs(try gain("inf") - -1) < 0.1)
            let text = try await jukebox("loudness")
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.contains("inf ") && text.stdout.contains("plays at -1.0 dB"), "\(text.stdout)")
            #expect(try await jukebox("play", "nan").status == 0)
            #expect(await log.waitFor("played nan"))
        }
        #expect(run.status == 0)
        // The figures were saved: every clip is in the file.
        let saved = try String(decoding: folder.read("f-state.loudness.json"), as: UTF8.self)
        for clip in ["clean", "nan", "inf", "late"] { #expect(saved.contains("\(clip).wav"), "\(saved)") }
        // And played at the target, as the clean copy would (a float clip reaches the file
        // device as floats).
        let heard = try await FFmpegLoudness.measure(["-f", "f32le", "-ar", "\(Self.rate)", "-ac", "2", "-i", output])
        #expect(abs(heard.integrated - -18) <= 1, "nan.wav played at \(heard)")
    }

    @Test func withoutATargetNothingIsMeasuredOrWritten() async throws {
        try folder.write("plain.json", text: #"{ "clips": [ { "file": "quiet.wav" } ] }"#)
        let arguments = [folder.file("plain.json"), "--socket", socket, "--state", folder.file("plain-state.json"), "--device", "null"]
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            let shown = try await jukebox("loudness")
            #expect(shown.stdout == "target: none: clips play as recorded, and are not measured (set \"loudness\" in the session, such as -18)\n")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("plain-state.loudness.json")))
    }
}
