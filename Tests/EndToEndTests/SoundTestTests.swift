import Foundation
import JukeboxTestSupport
import Testing

/// `jukebox test [DEVICE]` with the built daemon: the tone through the session's device (here
/// `null`, which takes audio faster than it plays, and says so), through another device, and
/// a device that does not exist, named with what to do. On the paced rig it is heard.
@Suite("Sound test", .timeLimit(.minutes(1)))
struct SoundTestTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }
    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0.2, count: 8000), encoding: .s16, rate: 8000, channels: 1))
        try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#)
    }

    @Test func theToneGoesThroughTheDeviceAndTheAnswerSaysWhatItFound() async throws {
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            let own = try await jukebox("test")
            #expect(own.status == 0, "\(own.stderr)")
            #expect(own.stdout.hasPrefix(#"played a 1s test tone through "null" (s16 44100 Hz 2 ch): it took "#), "\(own.stdout)")
            #expect(own.stdout.contains(#"faster than it plays: "null" is not a sound card"#), "\(own.stdout)")
            #expect(await log.waitFor("played test (test tone, 1s)"), "through the queue, as a clip")
            let history = try await jukebox("history")
            #expect(history.stdout.contains("test  completed"), "\(history.stdout)")
            // The JSON answer, for scripts and the page.
            let json = try await jukebox("--json", "test")
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(answer["device"] as? String == "null" && answer["realTime"] as? Bool == false && answer["seconds"] as? Double == 1)
            // Another device: opened for the tone alone.
            let other = try await jukebox("test", "default")
            #expect(other.status == 0 || other.stderr.contains(#"audio device "default""#), "\(other.stdout)\(other.stderr)")
            // A card that does not exist: the reason, and what to do.
            let missing = try await jukebox("test", "plughw:CARD=Nope,DEV=0")
            #expect(missing.status == 69)
            #expect(missing.stderr.contains(#"the test tone was not played: audio device "plughw:CARD=Nope,DEV=0": cannot open"#), "\(missing.stderr)")
            #expect(missing.stderr.contains("(the devices here are ") && missing.stderr.contains("null"), "the devices there are, as --check names them: \(missing.stderr)")
            // Paused, nothing plays through the session's device: said at once.
            #expect(try await jukebox("pause").status == 0)
            let paused = try await jukebox("test")
            #expect(paused.status != 0 && paused.stderr.contains("jukeboxd is paused, so nothing plays through its device: resume it"), "\(paused.stderr)")
            let empty = try await jukebox("test", "")
            #expect(empty.status != 0 && empty.stderr.contains("ALSA device name"), "\(empty.stderr)")
        }
    }
}

/// On the paced rig: a sound card's pace, and the tone heard.
extension RealTimeTests {
    @Test func theTestToneIsHeardAtTheDevicesPace() async throws {
        let arguments = try session(clips: [1])
        let reply = try await rig.with {
            try await rig.startCapture()
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                let reply = try await jukebox("test")
                #expect(await log.waitFor("pulse drained"))
                return reply
            }
            try await rig.stopCapture()
            #expect(run.status == 0)
            return run.result
        }
        #expect(reply.status == 0, "\(reply.stderr)")
        #expect(reply.stdout.contains(#"through "pulse""#) && reply.stdout.contains("as a sound card plays it"), "\(reply.stdout)")
        let heard = try rig.capture(frequencies: [880]).segments
        #expect(heard.count == 1 && (97...101).contains(heard.first?.windows ?? 0), "a second of 880 Hz: \(heard)")
    }
}
