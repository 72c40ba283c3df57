import Foundation
import JukeboxTestSupport
import Testing

/// Home Assistant's announcement on the paced rig: `play_media` with `announce: true` from
/// aioesphomeapi, its audio served on loopback, cuts into a playing clip, is heard whole, and
/// the clip goes on where it was cut.
extension RealTimeTests {
    @Test(.enabled(if: HomeAssistantClient.isInstalled, Comment(rawValue: HomeAssistantClient.missing)))
    func anAnnouncementFromHomeAssistantCutsInAndTheClipGoesOn() async throws {
        // c0: 20 s at 500 Hz; c1 (what Home Assistant's server serves): 1 s at 800 Hz.
        let arguments = try session(clips: [20, 1], extra: #", "esphome": { "listen": "127.0.0.1:0", "name": "Rig" }"#)
        let timing = try await rig.with {
            try await rig.startCapture()
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                #expect(await log.waitFor("Home Assistant's media player \"Rig\" listening"))
                let port = try #require(HomeAssistantClient.port(await log.lines))
                try await expectSuccess(jukebox("play", "c0"))
                #expect(await log.waitFor("opened pulse"))
                let started = ContinuousClock.now
                #expect(await played(3))
                let asked = ContinuousClock.now
                let client = try await HomeAssistantClient.run(port: port, key: nil, serve: folder.file("c1.wav"), [
                    "states", "announce-media:@SERVED@", "wait:announcing", "wait:playing",
                ])
                #expect(client.status == 0, "\(client.lines)")
                #expect(await log.waitFor("played c0"))
                #expect(await log.waitFor("pulse drained"))
                return asked - started
            }
            try await rig.stopCapture()
            #expect(run.status == 0)
            return run.result
        }
        let segments = try rig.capture(frequencies: Self.tones).segments
        #expect(segments.map(\.frequency) == [500, 800, 500], "\(segments)")
        guard segments.count == 3 else { return }
        // From the Python client's start (it imports aioesphomeapi, connects, subscribes, and
        // sends the address; jukeboxd fetches, decodes whole and cuts in) to the sound.
        let heardAfter = Double(segments[1].start - segments[0].start) / 100 - timing.inSeconds
        print("real-time rig: Home Assistant's announcement was heard \(Int(heardAfter * 1000)) ms after its client started")
        #expect(heardAfter < 5, "the announcement came \(Int(heardAfter * 1000)) ms after the client started")
        #expect((99...101).contains(segments[1].windows), "the announcement whole: \(segments)")
        #expect((1997...2003).contains(segments[0].windows + segments[2].windows), "all of c0, in two parts: \(segments)")
    }
}
