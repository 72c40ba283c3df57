import Foundation
import JukeboxTestSupport
import Testing

/// The music bed through the Snapcast output: MPD's `fifo` output feeds the bed, jukeboxd
/// mixes a clip over it into snapserver's pipe, and two snapclients play the same mix, the
/// announcement over the music in every room in sync.
extension SnapcastTests {
    @Test(.enabled(if: MPDServer.isInstalled, Comment(rawValue: MPDServer.missing)))
    func theBedWithAClipOverItIsTheSameMixInBothRooms() async throws {
        let mpd = try MPDServer(device: nil, fifo: folder.file("bed"))
        try folder.write("bed.json", text: """
            { "interval": { "min": "1h", "max": "1h" },
              "output": { "type": "snapcast", "pipe": "\(snapcast.pipe)", "format": "48000:16:2" },
              "bed": { "pipe": "\(folder.file("bed"))", "format": "44100:16:2", "level": "-18dB", "attack": "100ms", "release": "300ms" },
              "clips": [ { "file": "c1.wav" } ] }
            """)
        let arguments = [folder.file("bed.json")] + self.arguments.dropFirst()
        let music = 200.0
        let run = try await snapcast.run(clients: ["kitchen", "workshop"]) { _, _ in
            try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                try await mpd.run { _ in
                    let samples = WAVFile.tone(frequency: music, frames: 44_100 * 30, rate: 44_100, channels: 2)
                    _ = try mpd.folder.write("music/music.wav", WAVFile.bytes(samples, encoding: .s16, rate: 44_100, channels: 2))
                    _ = try await mpd.command(["update", "idle database"])
                    _ = try await mpd.command(["add music.wav", "setvol 100", "play"])
                    for client in ["kitchen", "workshop"] { try await waitUntilSounding(client) }
                    // A second of music in both rooms before the clip, to measure it against.
                    for client in ["kitchen", "workshop"] { try await waitForMore(client, seconds: 1) }
                    #expect(try await jukebox("play", "c1").status == 0)
                    #expect(await log.waitFor("played c1"))
                    // The rooms hear it a buffer later, and the music back up after release.
                    for client in ["kitchen", "workshop"] { try await waitForClip(client, thenSeconds: 1.5) }
                }
            }
        }
        #expect(run.status == 0)
        let dry = run.lines.filter { $0.contains("the music ran out mid-block") }
        #expect(dry.isEmpty, "the music never ran out while MPD played: \(dry)")
        let (kitchenBytes, workshopBytes) = (snapcast.outputBytes("kitchen"), snapcast.outputBytes("workshop"))
        for (client, bytes) in [("kitchen", kitchenBytes), ("workshop", workshopBytes)] {
            let clip = CaptureAnalysis(bytes: bytes, frequencies: Self.tones, rate: Snapcast.rate).segments
            let heard = try #require(clip.first { $0.frequency == Self.tones[1] }, "\(client) heard the clip: \(clip)")
            #expect((99...101).contains(heard.windows), "\(client): the whole clip: \(heard)")
            // 50 ms windows of the music: lowered under the clip, there before and after.
            let levels = CaptureAnalysis.amplitudes(bytes: bytes, frequency: music, frames: Snapcast.rate / 20, rate: Snapcast.rate)
            let (start, end) = ((heard.start + 4) / 5, heard.end / 5 - 1)
            let baseline = levels[max(0, start - 16)..<max(0, start - 4)].sorted()[6]
            #expect(baseline > 0.1, "\(client): the music before the clip: \(baseline)")
            let under = levels[start...end].map { 20 * log10(max($0, 1e-6) / baseline) }
            #expect(under.allSatisfy { $0 <= -15 }, "\(client): the music under the clip: \(under.map { Int($0.rounded()) })")
            let after = levels[(end + 1)...].prefix(30).map { 20 * log10(max($0, 1e-6) / baseline) }
            #expect(after.dropFirst(12).prefix(8).allSatisfy { abs($0) <= 1 }, "\(client): the music back after the clip: \(after.map { Int($0.rounded()) })")
        }
        // Both rooms play the same samples: aligned on the music's first sound, they agree.
        Self.expectSameSamples(kitchenBytes, workshopBytes)
    }

    /// Waits (up to 10 s) until the client has written `seconds` more of audio: it writes in
    /// real time.
    func waitForMore(_ client: String, seconds: Double) async throws {
        func size() -> Int { (try? FileManager.default.attributesOfItem(atPath: snapcast.output(client))[.size] as? Int) ?? 0 }
        let target = size() + Int(seconds * Double(Snapcast.rate)) * 4
        let deadline = ContinuousClock.now + .seconds(10)
        while size() < target, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(size() >= target, "\(client) went on playing")
    }

    /// Waits (up to 10 s) until the client's output holds c1's tone and `seconds` after it.
    func waitForClip(_ client: String, thenSeconds seconds: Double) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let heard = await capture(client)
            if let clip = heard.segments.first(where: { $0.frequency == Self.tones[1] }), heard.sound.count - clip.end >= Int(seconds * 100) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("\(client) never had c1 and \(seconds) s after it")
    }
}
