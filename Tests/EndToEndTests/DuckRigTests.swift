import Foundation
import JukeboxProtocol
import JukeboxTestSupport
import Testing

/// Debian's MPD playing music through the paced rig while jukeboxd plays a clip through the
/// same rig: the music is lowered while the clip is heard and comes back after, as the
/// capture shows (Goertzel on the music's frequency); and a jukeboxd killed while the music is
/// lowered puts it back at its next start.
/// The music's level around a clip heard in a capture, in 50 ms windows (CaptureAnalysis's are
/// 10 ms), in dB against its level before the clip: the median of the windows from
/// `baselineFrom` to 12 before the clip's first whole one.
struct MusicAroundClip {
    let music: [Double]
    /// The clip's first and last whole windows.
    let start: Int, end: Int
    let baseline: Double
    let clip: CaptureAnalysis.Segment

    init(capture: [UInt8], clip: CaptureAnalysis.Segment, frequency: Double, baselineFrom: Int) {
        music = CaptureAnalysis.amplitudes(bytes: capture, frequency: frequency)
        (start, end) = ((clip.start + 4) / 5, clip.end / 5 - 1)
        let before = music[max(0, start - baselineFrom)..<max(0, start - 12)].sorted()
        baseline = before.isEmpty ? 0 : before[before.count / 2]
        self.clip = clip
    }

    func decibels(_ amplitude: Double) -> Double { 20 * log10(max(amplitude, 1e-6) / baseline) }

    /// While the clip is heard.
    var during: [Double] { music[start...end].map(decibels) }

    /// When the music was 15 dB down, in ms against the clip's first heard sample (before it:
    /// negative).
    var down: Double? { (start - 12...end).first { decibels(music[$0]) <= -15 }.map { Double($0 * 5 - clip.start) * 10 } }

    /// When it was back within 1 dB, in ms after the clip's last heard sample.
    var up: Double? { (end..<music.count).first { decibels(music[$0]) >= -1 }.map { Double($0 * 5 + 5 - clip.end) * 10 } }
}

extension RealTimeTests {
    /// The music's frequency, below every clip's.
    static let music = 200.0

    /// `seconds` of MPD's music in its folder, updated into its database.
    func addMusic(_ mpd: MPDServer, seconds: Int) async throws {
        let samples = WAVFile.tone(frequency: Self.music, frames: 44_100 * seconds, rate: 44_100, channels: 2)
        _ = try mpd.folder.write("music/music.wav", WAVFile.bytes(samples, encoding: .s16, rate: 44_100, channels: 2))
        _ = try await mpd.command(["update", "idle database"])
    }

    /// Returns once MPD has played `seconds` of its song (asked every 20 ms); false after 10 s.
    func mpdPlayed(_ mpd: MPDServer, _ seconds: Double) async throws -> Bool {
        for _ in 0..<500 {
            if let elapsed = try await mpd.status()["elapsed"].flatMap(Double.init), elapsed >= seconds { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Returns once MPD's volume is `level` (asked every 20 ms); false after 10 s.
    func mpdVolume(_ mpd: MPDServer, is level: Int) async throws -> Bool {
        for _ in 0..<500 {
            if try await mpd.status()["volume"] == "\(level)" { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test(.enabled(if: MPDServer.isInstalled, Comment(rawValue: MPDServer.missing)))
    func mpdsMusicIsLoweredWhileAClipIsHeardAndComesBackAfter() async throws {
        let mpd = try MPDServer(device: "pulse")
        // c0: 2 s at 500 Hz; the music is 200 Hz.
        let arguments = try session(clips: [2], extra: #", "duck": { "mpd": ["\#(mpd.socket)"], "level": "-18dB", "attack": "300ms", "release": "1s" }"#)
        let lines = try await rig.with {
            try await rig.startCapture()
            return try await mpd.run(environment: rig.environment) { _ in
                try await addMusic(mpd, seconds: 30)
                _ = try await mpd.command(["add music.wav", "setvol 100", "play"])
                #expect(try await mpdPlayed(mpd, 1.5))
                let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                    try await expectSuccess(jukebox("play", "c0"))
                    #expect(await log.waitFor("played c0"))
                    let status = try await jukebox("status")
                    #expect(try await mpdVolume(mpd, is: 100), "MPD back at its level")
                    let after = try await mpd.status()["elapsed"].flatMap(Double.init) ?? 0
                    #expect(try await mpdPlayed(mpd, after + 1.5))
                    return status.stdout
                }
                try await rig.stopCapture()
                return run
            }
        }
        #expect(lines.status == 0)
        let capture = try folder.read("capture.raw")
        let clip = CaptureAnalysis(bytes: capture, frequencies: Self.tones).segments.filter { $0.frequency == 500 }
        #expect(clip.count == 1, "\(clip)")
        guard let heard = clip.first else { return }
        // In 50 ms windows: the clip's from the first whole window after its start to the last
        // before its end.
        let around = MusicAroundClip(capture: capture, clip: heard, frequency: Self.music, baselineFrom: 30)
        #expect(around.baseline > 0.1, "the music was heard before the clip: \(around.baseline)")
        let during = around.during
        print("duck rig: the music under the clip: \(during.map { Int($0.rounded()) }) dB")
        #expect(during.allSatisfy { $0 <= -15 }, "at least 15 dB lower while the clip is heard: \(during)")
        let (down, up) = (around.down, around.up)
        print("duck rig: music 15 dB down \(Int(-(down ?? 0))) ms before the clip was heard; back within 1 dB \(Int(up ?? -1)) ms after its end")
        #expect(down.map { $0 <= 0 } == true)
        #expect(up.map { $0 <= 2000 } == true, "back after release (1 s), with MPD's buffer")
        let back = around.music[(heard.end / 5 + 30)...].prefix(10).map(around.decibels)
        #expect(back.allSatisfy { abs($0) <= 1 }, "back at its level: \(back)")
    }

    @Test(.enabled(if: MPDServer.isInstalled, Comment(rawValue: MPDServer.missing)))
    func aDaemonKilledWhileTheMusicIsLowPutsItBackAtItsNextStart() async throws {
        let mpd = try MPDServer(device: nil)
        let arguments = try session(clips: [4], extra: #", "duck": { "mpd": ["\#(mpd.socket)"], "level": 0.25, "attack": "0s" }"#)
        try await rig.with {
            try await mpd.run { _ in
                try await addMusic(mpd, seconds: 60)
                _ = try await mpd.command(["add music.wav", "setvol 80", "play"])
                // Killed while the music is low: the clip plays again at the next start, after
                // MPD has been put back.
                let killed = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", stopWith: .kill, environment: rig.environment) { _ in
                    try await expectSuccess(jukebox("play", "c0"))
                    #expect(await played(1))
                    #expect(try await mpd.status()["volume"] == "20")
                    return try await jukebox("status").stdout
                }
                #expect(killed.status == nil)
                #expect(killed.result.contains("ducked:    mpd \(mpd.socket)"), "\(killed.result)")
                let state = String(decoding: try folder.read("state.json"), as: UTF8.self)
                #expect(state.contains(#""lowered":20"#) && state.contains(#""volume":80"#), "\(state)")
                let again = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                    #expect(await log.waitFor("is back at its level"))
                    #expect(await log.waitFor("played c0"))
                    return try await mpdVolume(mpd, is: 80)
                }
                #expect(again.result, "MPD back at 80 after the restart, and after the clip played again")
                let order = again.lines.firstIndex { $0.contains("is back at its level") } ?? .max
                #expect(order < (again.lines.firstIndex { $0.contains("playing c0") } ?? -1), "put back before any clip starts: \(again.lines)")
                // Killed again while low, and someone turns MPD down meanwhile: it is left as they set it.
                _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", stopWith: .kill, environment: rig.environment) { _ in
                    try await expectSuccess(jukebox("play", "c0"))
                    #expect(await played(1))
                    #expect(try await mpd.status()["volume"] == "20")
                }
                _ = try await mpd.command(["setvol 65"])
                let kept = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                    #expect(await log.waitFor("was changed while lowered; it is left as it is"))
                    // The clip plays again, lowering MPD from 65, and puts it back at 65.
                    #expect(await log.waitFor("played c0"))
                    return try await mpdVolume(mpd, is: 65) ? "65" : try await mpd.status()["volume"]
                }
                #expect(kept.result == "65")
            }
        }
    }
}

extension RealTimeTests {
    /// snapserver with two streams: "den" plays the music stream and is lowered through the
    /// JSON-RPC while a clip plays through the rig, then put back; "kitchen", on the other
    /// stream and not named in `duck`, is left alone.
    @Test(.enabled(if: Snapcast.isInstalled, Comment(rawValue: Snapcast.missing)))
    func aSnapclientPlayingAnotherStreamIsLoweredAndPutBack() async throws {
        let snapcast = try Snapcast(control: true)
        let control = try #require(snapcast.controlPort)
        let arguments = try session(clips: [2], extra: #", "duck": { "snapcast": { "server": "127.0.0.1:\#(control)", "clients": ["den"] }, "level": 0.2, "attack": "100ms", "release": "100ms" }"#)
        @Sendable func volume(_ client: String) async throws -> Int? {
            let line = try await snapcast.control(#"{"id":7,"jsonrpc":"2.0","method":"Client.GetStatus","params":{"id":"\#(client)"}}"#)
            guard let range = line.range(of: #""percent":"#) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        try await rig.with {
            try await snapcast.run(clients: ["den", "kitchen"]) { _, _ in
                // den to the music stream, in a group of its own.
                let status = try await snapcast.control(#"{"id":1,"jsonrpc":"2.0","method":"Client.GetStatus","params":{"id":"den"}}"#)
                #expect(status.contains(#""id":"den""#), "\(status)")
                let server = try JSONParser.parse(Array(try await snapcast.control(#"{"id":2,"jsonrpc":"2.0","method":"Server.GetStatus"}"#).utf8))
                guard case .object(let reply) = server, case .object(let result)? = reply["result"], case .object(let status)? = result["server"],
                      case .array(let groups)? = status["groups"] else { Issue.record("no groups in \(server)"); return }
                let denGroup = groups.first { group in
                    guard case .object(let fields) = group, case .array(let clients)? = fields["clients"] else { return false }
                    return clients.contains { if case .object(let client) = $0 { client["id"] == .string("den") } else { false } }
                }
                guard case .object(let group)? = denGroup, case .string(let groupID)? = group["id"] else { Issue.record("den has no group"); return }
                if (group["clients"].map { if case .array(let clients) = $0 { clients.count } else { 0 } } ?? 0) > 1 {
                    _ = try await snapcast.control(#"{"id":4,"jsonrpc":"2.0","method":"Group.SetClients","params":{"id":"\#(groupID)","clients":["den"]}}"#)
                }
                let moved = try await snapcast.control(#"{"id":5,"jsonrpc":"2.0","method":"Group.SetStream","params":{"id":"\#(groupID)","stream_id":"music"}}"#)
                #expect(moved.contains(#""stream_id":"music""#), "den's group plays the music stream: \(moved)")
                for client in ["den", "kitchen"] {
                    _ = try await snapcast.control(#"{"id":3,"jsonrpc":"2.0","method":"Client.SetVolume","params":{"id":"\#(client)","volume":{"muted":false,"percent":90}}}"#)
                }
                let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                    try await expectSuccess(jukebox("play", "c0"))
                    #expect(await played(1))
                    let during = (try await volume("den"), try await volume("kitchen"))
                    let shown = try await jukebox("status").stdout
                    #expect(await log.waitFor("played c0"))
                    for _ in 0..<250 where try await volume("den") != 90 { try await Task.sleep(for: .milliseconds(20)) }
                    return (during, shown, try await volume("den"), try await volume("kitchen"))
                }
                #expect(run.status == 0)
                let (during, shown, denAfter, kitchenAfter) = run.result
                #expect(during.0 == 18 && during.1 == 90, "den lowered to a fifth, kitchen left: \(during)")
                #expect(shown.contains("ducked:    snapclient den on 127.0.0.1:\(control)"), "\(shown)")
                #expect(denAfter == 90 && kitchenAfter == 90)
            }
        }
    }
}
