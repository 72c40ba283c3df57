import Foundation
import JukeboxProtocol
import JukeboxTestSupport
import Testing

/// Debian's MPD playing music into the music bed through its `fifo` output, and jukeboxd
/// playing the bed, with a clip mixed over it, through the paced rig: the capture holds the
/// music without a gap, lowered under the clip and back after; a writer that stops for 10 s
/// neither stalls nor delays the clips, and its music is back as soon as it writes again.
extension RealTimeTests {
    /// The first clip lowers no other player (`duck: false`): the bed is lowered under it all the same.
    func bedSession(clips: [Double]) throws -> [String] {
        let arguments = try session(clips: clips, extra: #", "bed": { "pipe": "\#(folder.file("bed"))", "format": "44100:16:2", "level": "-18dB", "attack": "300ms", "release": "1s" }"#)
        let text = try String(contentsOfFile: folder.file("s.json"), encoding: .utf8)
        try folder.write("s.json", text: text.replacingOccurrences(of: #"{ "file": "c0.wav" }"#, with: #"{ "file": "c0.wav", "duck": false }"#))
        return arguments
    }

    /// Returns once `jukebox bed` says `words` (asked every 20 ms); false after 10 s.
    func bed(says words: String) async throws -> Bool {
        for _ in 0..<500 {
            if try await jukebox("bed").stdout.contains(words) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test(.enabled(if: MPDServer.isInstalled, Comment(rawValue: MPDServer.missing)))
    func mpdsMusicThroughTheBedIsLoweredUnderAClipWithoutAGap() async throws {
        let mpd = try MPDServer(device: nil, fifo: folder.file("bed"))
        let arguments = try bedSession(clips: [2, 2])
        let shown = try await rig.with {
            try await rig.startCapture()
            return try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                try await mpd.run { _ in
                    try await addMusic(mpd, seconds: 60)
                    _ = try await mpd.command(["add music.wav", "setvol 100", "play"])
                    #expect(try await bed(says: "music playing"))
                    #expect(try await mpdPlayed(mpd, 2))
                    try await expectSuccess(jukebox("play", "c0"))
                    #expect(await log.waitFor("played c0"))
                    let status = try await jukebox("status").stdout
                    let after = try await mpd.status()["elapsed"].flatMap(Double.init) ?? 0
                    #expect(try await mpdPlayed(mpd, after + 2))
                    // The writer stops for 10 s: a clip plays at once, over silence.
                    _ = try await mpd.command(["pause 1"])
                    #expect(try await bed(says: "no music coming in"))
                    let asked = ContinuousClock.now
                    try await expectSuccess(jukebox("play", "c1"))
                    #expect(await log.waitFor("played c1"))
                    let took = ContinuousClock.now - asked
                    print("bed rig: a 2 s clip while the writer is stopped took \(took) from the command to its end")
                    #expect(took < .seconds(4), "the clip was not held up by the stopped writer: \(took)")
                    try await Task.sleep(until: asked + .seconds(10))
                    _ = try await mpd.command(["pause 0"])
                    #expect(try await bed(says: "music playing"))
                    let resumed = try await mpd.status()["elapsed"].flatMap(Double.init) ?? 0
                    #expect(try await mpdPlayed(mpd, resumed + 2))
                    try await rig.stopCapture()
                    return status
                }
            }
        }
        #expect(shown.result.contains("bed:       on, music playing"), "\(shown.result)")
        // It ran out once: when MPD paused.
        let dry = shown.lines.filter { $0.contains("the music ran out mid-block") }
        #expect(dry.count == 1, "the music ran out only when MPD paused: \(dry)")
        let capture = try folder.read("capture.raw")
        let clips = CaptureAnalysis(bytes: capture, frequencies: Self.tones).segments
        let first = try #require(clips.first { $0.frequency == 500 }, "c0 heard: \(clips)")
        let second = try #require(clips.first { $0.frequency == 800 }, "c1 heard: \(clips)")
        let levels = MusicAroundClip(capture: capture, clip: first, frequency: Self.music, baselineFrom: 40)
        let (music, start, end, decibels) = (levels.music, levels.start, levels.end, levels.decibels)
        #expect(levels.baseline > 0.1, "the music was heard before the clip: \(levels.baseline)")
        let during = levels.during
        print("bed rig: the music under the clip: \(during.map { Int($0.rounded()) }) dB")
        #expect(during.allSatisfy { $0 <= -15 }, "at least 15 dB lower while the clip is heard: \(during)")
        // Never a gap: from 2 s before the clip to 2 s after it, the music is always there.
        let around = music[(start - 40)...(end + 40)].map(decibels)
        #expect(around.allSatisfy { $0 >= -25 }, "the music never stops around the clip: \(around.map { Int($0.rounded()) })")
        let (down, up) = (levels.down, levels.up)
        print("bed rig: music 15 dB down \(Int(-(down ?? 0))) ms before the clip was heard; back within 1 dB \(Int(up ?? -1)) ms after its end")
        #expect(down.map { $0 <= 0 } == true)
        #expect(up.map { $0 <= 1500 } == true, "back after release (1 s)")
        // c1, while the writer was stopped: the whole clip, with no music under it, and the
        // music back after MPD played on.
        #expect(second.end - second.start >= 195, "all of c1: \(second)")
        let quiet = music[((second.start + 4) / 5)...(second.end / 5 - 1)]
        #expect(quiet.allSatisfy { decibels($0) <= -30 }, "no music under c1")
        #expect(music.suffix(20).allSatisfy { abs(decibels($0)) <= 1 }, "the music is back at its level")
    }
}

/// A reload that changes only the bed's level while a clip plays: the clip ends on the old
/// bed, then the old bed lets the device go and the new one takes it. PulseAudio's own events
/// (`pactl subscribe`) show every stream made and removed on the rig, so an overlap of any
/// length would be seen; on an `hw:` card, a second stream is "device busy".
extension RealTimeTests {
    /// `pactl subscribe` on the rig, ready once it has seen an event: the sink is muted and
    /// unmuted every 200 ms for 2 s to make one.
    func streamWatcher() -> ServerProcess {
        let script = """
            stdbuf -oL pactl subscribe >&2 & watcher=$!
            trap 'kill $watcher; exit 0' TERM
            for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.2; pactl set-sink-mute jbsink toggle; pactl set-sink-mute jbsink toggle; done
            wait $watcher
            """
        return ServerProcess("/bin/sh", ["-c", script], environment: rig.environment) { $0.contains("on sink #") }
    }

    /// From `pactl subscribe`'s lines: how many playback streams were made, and the most open at once.
    static func streams(_ lines: [String]) -> (made: Int, most: Int) {
        var open: Set<Substring> = []
        var (made, most) = (0, 0)
        for line in lines {
            if let new = line.firstMatch(of: /Event 'new' on sink-input #(\d+)/) {
                open.insert(new.1)
                made += 1
                most = max(most, open.count)
            } else if let removed = line.firstMatch(of: /Event 'remove' on sink-input #(\d+)/) {
                open.remove(removed.1)
            }
        }
        return (made, most)
    }

    @Test func aReloadThatChangesTheBedsLevelWhileAClipPlaysKeepsOneStreamOnTheDevice() async throws {
        let arguments = try bedSession(clips: [3])
        let (events, daemon) = try await rig.with {
            let watcher = streamWatcher()
            return try await watcher.whileRunning { watcher in
                let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                    #expect(try await bed(says: "no music coming in"))
                    try await expectSuccess(jukebox("play", "c0"))
                    #expect(await played(0.5))
                    let session = try String(decoding: folder.read("s.json"), as: UTF8.self)
                    try folder.write("s.json", text: session.replacingOccurrences(of: #""level": "-18dB""#, with: #""level": "-12dB""#))
                    try await expectSuccess(jukebox("reload"))
                    #expect(await log.waitFor("played c0"))
                    #expect(await log.waitFor("output is now \"pulse\""))
                    // The new bed's stream is made once the old one's is gone.
                    #expect(await watcher.log.waitUntil { Self.streams($0).made >= 2 })
                    #expect(try await bed(says: "no music coming in"))
                }
                return (await watcher.log.lines, run.lines)
            }
        }
        let streams = Self.streams(events)
        let opens = daemon.filter { $0.contains("opened") || $0.contains("output is now") || $0.contains("audio device") }
        print("bed rig: a reload of the bed's level mid-clip: \(streams.made) streams made, at most \(streams.most) at once")
        #expect(streams.made >= 2, "the old bed's stream and the new one's: \(events)")
        #expect(streams.most == 1, "never two jukeboxd streams on the device at once: \(events)\n\(opens)")
        print("bed rig: \(opens)")
    }
}
