import Foundation
import JukeboxTestSupport
import Testing

/// Faults that used to crash the daemon, or make it crash again on every start, checked on
/// the built binaries with real ALSA devices defined by an ALSA configuration of the test's own.
@Suite("Crash-proofing end to end", .timeLimit(.minutes(1)))
struct HardeningTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }

    init() throws {
        folder = try TemporaryDirectory()
    }

    /// An ALSA configuration: the system's, plus `extra`.
    func alsaConfig(_ extra: String) throws -> [String: String] {
        try folder.write("asound.conf", text: "</usr/share/alsa/alsa.conf>\n" + extra + "\n")
        return ["ALSA_CONFIG_PATH": folder.file("asound.conf")]
    }

    /// `Int64(NaN)` used to trap in the float-to-integer conversion, on any device without
    /// float support (most `hw:` and `dmix` devices); the clip stayed at the head of the queue,
    /// so the daemon crashed again on every start.
    @Test func floatClipWithNaNAndInfinityPlaysOnAnIntegerOnlyDevice() async throws {
        var samples = WAVFile.tone(frequency: 440, frames: 4000, rate: 8000, channels: 1).map { Float($0) }
        for index in stride(from: 0, to: samples.count, by: 7) { samples[index] = [Float.nan, .infinity, -.infinity, 3e38][index / 7 % 4] }
        try folder.write("nan.wav", WAVFile.rawFloat32(samples, rate: 8000, channels: 1))
        try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "nan.wav" } ] }"#)
        let out = folder.file("out.raw")
        let environment = try alsaConfig("""
            pcm.intonly { type linear slave { pcm { type file slave.pcm "null" file "\(out)" format "raw" } format S16_LE } }
            """)
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "intonly"]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: environment) { [self] log in
            #expect(try await jukebox("play", "nan").status == 0)
            #expect(await log.waitFor("played nan"))
            return try await jukebox("status").status
        }
        #expect(run.result == 0, "the daemon still answers after playing the clip")
        #expect(run.status == 0)
        let written = try folder.read("out.raw")
        let values = stride(from: 0, to: written.count, by: 2).map { Int16(bitPattern: UInt16(written[$0]) | UInt16(written[$0 + 1]) << 8) }
        #expect(values.count == samples.count)
        #expect(values[0] == 0, "NaN plays as silence")
        #expect(values[7] == 32_767, "+Inf saturates")
        #expect(values[14] <= -32_767, "-Inf saturates")
        #expect(values[21] == 32_767, "an over saturates")
    }

    /// At 100 % volume and 0 dB the player leaves samples as decoded, and a device that takes
    /// floats (here ALSA's `plug`, converting to S16 itself) would be sent a NaN unchanged: a
    /// full-scale click (−32768) in a quiet clip. NaN plays as silence whatever the gain.
    @Test func aNaNReachesAFloatDeviceAsSilence() async throws {
        var samples = WAVFile.tone(frequency: 440, frames: 4000, rate: 8000, channels: 1, amplitude: 0.1).map { Float($0) }
        for index in stride(from: 1, to: samples.count, by: 50) { samples[index] = index % 100 == 1 ? .nan : .infinity }
        try folder.write("nan.wav", WAVFile.rawFloat32(samples, rate: 8000, channels: 1))
        try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "nan.wav" } ] }"#)
        let out = folder.file("out.raw")
        let environment = try alsaConfig("""
            pcm.floats { type plug slave { pcm { type file slave.pcm "null" file "\(out)" format "raw" } format S16_LE rate 8000 channels 1 } }
            """)
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "floats"]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: environment) { [self] (log: LogLines) async throws -> Bool in
            #expect(try await jukebox("play", "nan").status == 0)
            return await log.waitFor("played nan")
        }
        #expect(run.result)
        #expect(run.status == 0)
        let written = try folder.read("out.raw")
        let values = stride(from: 0, to: written.count, by: 2).map { Int16(bitPattern: UInt16(written[$0]) | UInt16(written[$0 + 1]) << 8) }
        #expect(values.count == samples.count)
        for index in stride(from: 1, to: min(values.count, samples.count), by: 100) {
            #expect(values[index] == 0, "NaN at sample \(index) plays as silence, not \(values[index])")
        }
        for index in stride(from: 51, to: min(values.count, samples.count), by: 100) {
            #expect(values[index] >= 32_766, "+Inf at sample \(index) plays at full scale, not \(values[index])")
        }
        #expect(values[2] != 0 && abs(Int(values[2])) < 4_000, "the tone around them is as recorded: \(values[2])")
    }

    /// A clip that takes the daemon down while it plays must not do so for ever: the start of
    /// the first entry after a restart is saved before it plays, and an entry that was playing
    /// at two crashes in a row goes to the history as failed. The crash is a SIGKILL while the
    /// entry waits for a device that does not exist, so it is in play at a known moment.
    @Test func entryPlayingAtTwoCrashesInARowIsSkippedAndTheRestKept() async throws {
        for id in ["a", "b"] {
            try folder.write("\(id).wav", WAVFile.bytes(Array(repeating: 0.1, count: 800), encoding: .s16, rate: 8000, channels: 1))
        }
        try folder.write("s.json", text: #"{ "device": "jukebox_absent", "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" }, { "file": "b.wav" } ] }"#)
        let environment = try alsaConfig("# no jukebox_absent here")
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json")]
        // Queue both while paused, and stop cleanly: a clean stop is no crash.
        let queued = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: environment) { [self] (_: LogLines) async throws in
            #expect(try await jukebox("pause").status == 0)
            #expect(try await jukebox("play", "a", "b").status == 0)
            #expect(try await jukebox("resume").status == 0)
        }
        #expect(queued.status == 0)
        for round in 1...2 {
            let crashed = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", stopWith: .kill, environment: environment) { log in
                await log.waitFor("a stays queued, retrying")
            }
            #expect(crashed.result, "round \(round)")
            #expect(!crashed.lines.contains { $0.contains("stopped the player twice") }, "round \(round)")
        }
        let state = try String(decoding: folder.read("state.json"), as: UTF8.self)
        #expect(state.contains(#""started":{"count":2,"ticket":1}"#), "\(state)")
        let third = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: environment) { [self] log in
            #expect(await log.waitFor("b stays queued, retrying"))
            return try await jukebox("--json", "history").stdout
        }
        #expect(third.lines.contains { $0.contains("warning") && $0.contains("a (ticket 1, a.wav) was playing each of the last 2 times the daemon stopped without shutting down; stopped the player twice; skipped") }, "\(third.lines)")
        #expect(third.result.contains(#""outcome":"failed""#) && third.result.contains(#""reason":"stopped the player twice; skipped""#), "\(third.result)")
        #expect(third.lines.contains { $0.contains("b will play again from its start after a restart") }, "b is kept")
    }

    /// The session's duration came while the clip waited for a device that is not there: the
    /// daemon used to wait for that clip for ever, and SIGTERM could not end it either. It now
    /// ends at its duration, and the clip stays queued for the next start.
    @Test func theSessionEndsAtItsDurationWhileAClipWaitsForAMissingDevice() async throws {
        try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0.1, count: 800), encoding: .s16, rate: 8000, channels: 1))
        try folder.write("s.json", text: #"{ "device": "jukebox_absent", "interval": { "min": "1s", "max": "1s" }, "duration": "3s", "clips": [ { "file": "a.wav" } ] }"#)
        let environment = try alsaConfig("# no jukebox_absent here")
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json")]
        let run = try await DaemonProcess.run(arguments, environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("a stays queued, retrying"), "\(run.stderr)")
        #expect(run.stderr.contains("reached its duration of 3s"), "\(run.stderr)")
        #expect(run.stderr.contains("a will play again from its start after a restart"), "\(run.stderr)")
        let state = try String(decoding: folder.read("state.json"), as: UTF8.self)
        #expect(state.contains(#""waiting":[{"#), "the clip is kept: \(state)")
    }
}
