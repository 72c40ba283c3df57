import Foundation
import JukeboxCore
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

/// A device name from a client is ALSA configuration: `file` PCMs write a path or run a
/// command through a shell. None of these names may do either, from the names the attack
/// used to those a user's `.asoundrc` defines (listed, through a plug, inline, through a
/// `pcm_slave`); a harmless device of the user's own still plays.
@Suite("Sound test: a client's device name", .timeLimit(.minutes(1)))
struct ClientDeviceNameTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }
    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }
    static let session = #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0.2, count: 8000), encoding: .s16, rate: 8000, channels: 1))
        try folder.write("s.json", text: Self.session)
        func hint(_ text: String) -> String { #"hint { show on description "\#(text)" }"# }
        try folder.write(".asoundrc", text: """
            pcm.tap { type file slave.pcm "null" file "\(folder.file("tap-mark"))" format "raw" \(hint("tap")) }
            pcm.wrapped { type plug slave.pcm "tap" \(hint("wrapped")) }
            pcm.inline { type plug slave { pcm { type file slave.pcm "null" file "\(folder.file("inline-mark"))" format "raw" } } \(hint("inline")) }
            pcm_slave.through { pcm "tap" }
            pcm.viaslave { type plug slave "through" \(hint("viaslave")) }
            pcm.quiet { type plug slave.pcm "null" \(hint("quiet")) }
            """)
    }

    @Test func noNameAClientGivesRunsAProgramOrWritesAFile() async throws {
        let marks = (1...4).map { folder.file("mark-\($0)") }
        let attacks = [
            "file:'|touch \(marks[0])',raw",
            "file:FILE='|touch \(marks[1])'",
            "plug:\"file:'|touch \(marks[2])'\"",
            "tee:null,'|touch \(marks[3])',raw",
            "file:'\(folder.file("s.json"))',raw",
            "tap", "wrapped", "inline", "viaslave",
            "hw:0;x", "default:'x'", "plughw:CARD=x,FILE=y",
        ]
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: ["HOME": folder.path]) { _ async throws in
            for name in attacks {
                let refused = try await jukebox("test", name)
                #expect(refused.status == 77, "\(name): \(refused.stdout)\(refused.stderr)")
                #expect(refused.stderr.contains("jukeboxd does not open \"\(name)\" for a client: "), "\(name): \(refused.stderr)")
                #expect(refused.stderr.contains("Test a device `aplay -L` lists"), "what to do: \(refused.stderr)")
            }
            // Each way through the user's configuration names its reason.
            let listed = try await jukebox("test", "viaslave")
            #expect(listed.stderr.contains("its definition writes to a file or runs a program (type file)"), "\(listed.stderr)")
            let unlisted = try await jukebox("test", "file:'x'")
            #expect(unlisted.stderr.contains("only the devices `aplay -L` lists, or a card's hw:, plughw: or default: name"), "\(unlisted.stderr)")
            // The user's harmless device plays, and so does the session's own.
            let quiet = try await jukebox("test", "quiet")
            #expect(quiet.status == 0, "\(quiet.stderr)")
            #expect(try await jukebox("test", "null").status == 0)
        }
        for mark in marks + ["tap-mark", "inline-mark"].map(folder.file) {
            #expect(!FileManager.default.fileExists(atPath: mark), "\(mark) was made")
        }
        #expect(try String(contentsOfFile: folder.file("s.json"), encoding: .utf8) == Self.session, "the session file is unchanged")
    }
}

/// A stop ends in seconds even when the session's own device never answers: here a `file`
/// device writing into a FIFO nobody reads, whose open holds the device's thread for good.
@Suite("Stop deadline", .timeLimit(.minutes(1)))
struct StopDeadlineTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0.2, count: 8000), encoding: .s16, rate: 8000, channels: 1))
        try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#)
        #expect(mkfifo(folder.file("fifo"), 0o600) == 0)
        try folder.write(".asoundrc", text: #"pcm.stuck { type file slave.pcm "null" file "\#(folder.file("fifo"))" format "raw" }"#)
    }

    @Test func aDeviceThatNeverAnswersHoldsAStopForTenSecondsAtMost() async throws {
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "stuck", "--log-level", "debug"]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: ["HOME": folder.path]) { log async throws in
            #expect(try await jukebox("play", "a").status == 0)
            #expect(await log.waitFor("playing a (ticket"))
            // The daemon still answers while its device is stuck.
            #expect(try await jukebox("status").status == 0)
        }
        #expect(run.status == 74, "\(run.lines.suffix(5))")
        #expect(run.lines.contains { $0.contains(#"the stop did not end within 10 s: audio device "stuck" has not answered"#) }, "\(run.lines.suffix(5))")
    }
}

/// The plain names that name a card and nothing else.
@Suite struct PlainCardNameTests {
    @Test(arguments: [
        ("default", true), ("sysdefault", true), ("default:1", true), ("default:CARD=Device", true), ("sysdefault:CARD=PCH", true),
        ("hw:0", true), ("hw:1,0", true), ("hw:1,0,2", true), ("plughw:CARD=Device,DEV=0", true), ("plughw:CARD=Device,DEV=0,SUBDEV=1", true),
        ("hw:CARD=x,1", false), ("hw:1,DEV=0", false), ("hw:1,0,0,0", false), ("hw:", false), ("plughw:1,x", false),
        ("default:'x'", false), ("file:x", false), ("hw:x;y", false), ("plug:hw", false), ("dmix", false), ("hw:CARD=\"x\"", false),
        ("default:CARD=Device,DEV=0", false),
    ])
    func plainCardNames(name: String, plain: Bool) {
        #expect(ClientDeviceName.isPlainCardName(name) == plain, "\(name)")
    }
}
