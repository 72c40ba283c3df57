import Foundation
import JukeboxTestSupport
import Testing

/// The Snapcast output with the built daemon and a real snapserver and two snapclients that
/// play into files: clips of three formats, queued by three clients at once, heard whole, in
/// order and in sync in both "rooms"; a prompt skip; and snapserver missing, killed or
/// misconfigured without losing a clip.
@Suite("Snapcast output", .serialized, .timeLimit(.minutes(2)), .enabled(if: Snapcast.isInstalled, Comment(rawValue: Snapcast.missing)))
struct SnapcastTests {
    let folder: TemporaryDirectory
    let snapcast: Snapcast
    var socket: String { folder.file("c.sock") }
    /// Far enough apart to tell in a 10 ms window.
    static let tones: [Double] = [500, 1100, 1700, 2300]

    init() throws {
        folder = try TemporaryDirectory()
        snapcast = try Snapcast(buffer: 300)
        // Three formats: 12 kHz mono, 44.1 kHz stereo, 48 kHz 24-bit stereo; one second each.
        try folder.write("c0.wav", WAVFile.bytes(WAVFile.tone(frequency: Self.tones[0], frames: 12_000, rate: 12_000, channels: 1), encoding: .s16, rate: 12_000, channels: 1))
        try folder.write("c1.wav", WAVFile.bytes(WAVFile.tone(frequency: Self.tones[1], frames: 44_100, rate: 44_100, channels: 2), encoding: .s16, rate: 44_100, channels: 2))
        try folder.write("c2.wav", WAVFile.bytes(WAVFile.tone(frequency: Self.tones[2], frames: 48_000, rate: 48_000, channels: 2), encoding: .s24, rate: 48_000, channels: 2))
        // Three seconds, to be skipped.
        try folder.write("long.wav", WAVFile.bytes(WAVFile.tone(frequency: Self.tones[3], frames: 144_000, rate: 48_000, channels: 2), encoding: .s16, rate: 48_000, channels: 2))
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" },
              "output": { "type": "snapcast", "pipe": "\(snapcast.pipe)", "format": "48000:16:2" },
              "clips": [ { "file": "c0.wav" }, { "file": "c1.wav" }, { "file": "c2.wav" }, { "file": "long.wav" } ] }
            """)
    }

    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--log-level", "debug"] }

    func jukebox(_ words: String...) async throws -> DaemonProcess.Outcome {
        try await DaemonProcess.run(["--socket", socket] + words, tool: "jukebox")
    }

    func capture(_ client: String) -> CaptureAnalysis {
        CaptureAnalysis(bytes: snapcast.outputBytes(client), frequencies: Self.tones, rate: Snapcast.rate)
    }

    /// Waits until the client's output holds `count` tone segments and then 0.5 s of quiet.
    func waitForSound(_ client: String, segments count: Int) async throws -> CaptureAnalysis {
        for _ in 0..<400 {
            let heard = capture(client)
            if let last = heard.segments.dropFirst(count - 1).first, heard.sound.count - last.end >= 50,
               !heard.sound[last.end...].contains(true) {
                return heard
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return capture(client)
    }

    @Test func clipsOfThreeFormatsFromThreeClientsPlayWholeInOrderAndInSyncInBothRooms() async throws {
        let run = try await snapcast.run(clients: ["kitchen", "workshop"]) { _, _ in
            try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                // Held while the three are queued at once, so they play back to back.
                #expect(try await jukebox("pause").status == 0)
                let tickets = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                    for index in 0..<3 {
                        group.addTask {
                            let reply = try await jukebox("--json", "play", "c\(index)", "--client", "room \(index)")
                            return (index, try #require(reply.stdout.firstMatch(of: /"ticket":(\d+)/).map { Int($0.1)! }, "\(reply)"))
                        }
                    }
                    return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
                }
                #expect(try await jukebox("resume").status == 0)
                #expect(await log.waitUntil { $0.filter { $0.contains("played c") }.count == 3 })
                // Played means written to the pipe: the rooms hear it a buffer later.
                for client in ["kitchen", "workshop"] { _ = try await waitForSound(client, segments: 3) }
                return tickets.sorted { $0.value < $1.value }.map { Self.tones[$0.key] }
            }
        }
        let order = run.result
        #expect(run.lines.filter { $0.contains("played c") }.count == 3, "each logged as played once")
        var onsets: [Int] = []
        for client in ["kitchen", "workshop"] {
            let heard = capture(client)
            let segments = heard.segments
            #expect(segments.map(\.frequency) == order, "\(client): \(segments)")
            // Whole: one second each, within a 10 ms window at either end.
            #expect(segments.allSatisfy { (99...101).contains($0.windows) }, "\(client): \(segments)")
            // Back to back: at most one 20 ms chunk of silence between clips, no overlap.
            #expect(CaptureAnalysis.gaps(segments).allSatisfy { (0...2).contains($0) }, "\(client): \(segments)")
            let inside = heard.twoToneWindows.filter { $0 > (segments.first?.start ?? 0) && $0 < (segments.last?.end ?? 0) - 1 }
            #expect(inside.count <= 2 * 2, "\(client): two tones at once in \(inside)")
            onsets.append(Self.onset(snapcast.outputBytes(client)))
        }
        // Both rooms play the same samples: aligned on the first sound, they agree.
        let (kitchen, workshop) = (Self.left(snapcast.outputBytes("kitchen")), Self.left(snapcast.outputBytes("workshop")))
        let length = min(kitchen.count - onsets[0], workshop.count - onsets[1], 3 * Snapcast.rate)
        var worst = 0
        for index in 0..<length { worst = max(worst, abs(Int(kitchen[onsets[0] + index]) - Int(workshop[onsets[1] + index]))) }
        #expect(worst <= 1, "the two rooms' samples differ by up to \(worst)")
    }

    static func left(_ bytes: [UInt8]) -> [Int16] {
        stride(from: 0, to: bytes.count - 3, by: 4).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    /// The first frame louder than -30 dBFS.
    static func onset(_ bytes: [UInt8]) -> Int {
        left(bytes).firstIndex { abs(Int($0)) > 1036 } ?? 0
    }
}
