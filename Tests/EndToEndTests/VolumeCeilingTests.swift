import Foundation
import JukeboxTestSupport
import Testing

/// `maxVolume` holds a clip's own level when it plays, not when it was queued: an entry queued
/// at volume 100, then a cap lowered to 30, plays at 30. Heard through ALSA's `file` plugin,
/// sample for sample.
@Suite("Volume ceiling", .timeLimit(.minutes(1)))
struct VolumeCeilingTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }
    var output: String { folder.file("out.raw") }

    init() throws {
        folder = try TemporaryDirectory()
        let tone = WAVFile.tone(frequency: 440, frames: 4000, rate: 8000, channels: 1, amplitude: 0.5)
        try folder.write("a.wav", WAVFile.bytes(tone, encoding: .s16, rate: 8000, channels: 1))
        try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#)
    }

    /// The largest sample the device was given, 0 to 1.
    func peak() throws -> Double {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
        var peak = 0
        for index in stride(from: 0, to: bytes.count - 1, by: 2) {
            peak = max(peak, abs(Int(Int16(bitPattern: UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8))))
        }
        return Double(peak) / 32768
    }

    @Test func aLowerCapHoldsAClipQueuedAtItsOwnLevel() async throws {
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "file:FILE=\(output),FORMAT=raw"]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            #expect(try await jukebox("pause").status == 0)
            #expect(try await jukebox("play", "a", "--volume", "100").status == 0)
            try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "maxVolume": 0.3, "clips": [ { "file": "a.wav" } ] }"#)
            #expect(try await jukebox("reload").status == 0)
            let queue = try await jukebox("queue")
            #expect(queue.stdout.contains("at volume 30"), "what it will play at: \(queue.stdout)")
            #expect(try await jukebox("resume").status == 0)
            #expect(await log.waitFor("played a"))
            return try peak()
        }
        #expect(run.status == 0)
        // 0.5 at 30: 0.15 (one step of rounding).
        #expect(abs(run.result - 0.15) < 0.002, "peak \(run.result)")
    }
}
