import Foundation
import JukeboxProtocol
import JukeboxTestSupport
import Testing

/// FIFO, no overlap, gapless and prompt skips, shown on audio paced in real time: jukeboxd
/// plays through ALSA's `pulse` PCM into a PulseAudio null sink, whose output is captured and
/// searched for each test clip's own tone.
@Suite("Real-time playback", .serialized, .enabled(if: PulseRig.isInstalled, Comment(rawValue: PulseRig.missing)), .timeLimit(.minutes(2)))
struct RealTimeTests: DaemonSuite {
    let folder: TemporaryDirectory
    let rig: PulseRig
    /// Far enough apart to tell in a 10 ms window.
    static let tones: [Double] = [500, 800, 1100, 1400, 1700, 2000]

    init() throws {
        folder = try TemporaryDirectory()
        rig = PulseRig(folder: folder)
    }

    var socket: String { folder.file("c.sock") }

    /// Writes clip `c<index>` as `seconds` of tone `tones[index]`, and a session listing `count` clips.
    func session(clips seconds: [Double], interval: String = "1h", extra: String = "") throws -> [String] {
        for (index, length) in seconds.enumerated() {
            let samples = WAVFile.tone(frequency: Self.tones[index], frames: Int(length * 44_100), rate: 44_100, channels: 2)
            try folder.write("c\(index).wav", WAVFile.bytes(samples, encoding: .s16, rate: 44_100, channels: 2))
        }
        let clips = seconds.indices.map { #"{ "file": "c\#($0).wav" }"# }.joined(separator: ", ")
        let (low, high) = interval.contains("-") ? (String(interval.split(separator: "-")[0]), String(interval.split(separator: "-")[1])) : (interval, interval)
        try folder.write("s.json", text: """
            { "device": "pulse", "interval": { "min": "\(low)", "max": "\(high)" }\(extra), "clips": [ \(clips) ] }
            """)
        return [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--log-level", "debug", "--seed", "7"]
    }

    /// Returns once the daemon says the clip playing has played `seconds` of itself, as its
    /// `queue` answer shows it (asked every 20 ms, straight on the socket); false after 10 s.
    func played(_ seconds: Double) async -> Bool {
        struct Reply: Decodable { var result: QueueResult }
        for _ in 0..<500 {
            if let line = await RawControl.call(socket, #"{"jsonrpc":"2.0","id":1,"method":"queue"}"#),
               let reply = try? JSONDecoder().decode(Reply.self, from: Data(line.utf8)), (reply.result.playing?.elapsed ?? 0) >= seconds {
                return true
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    func expectSuccess(_ outcome: DaemonProcess.Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(outcome.status == 0, "\(outcome.stderr)", sourceLocation: sourceLocation)
    }

    @Test func fiveClientsAtOnceArePlayedOneAfterAnotherInAcknowledgedOrder() async throws {
        // A second each, so every client is queued while the first clip still plays even
        // when the machine is busy starting the five client processes.
        let arguments = try session(clips: [1, 1, 1, 1, 1])
        let tickets = try await rig.with {
            try await rig.startCapture()
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                let tickets = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                    for index in 0..<5 {
                        group.addTask {
                            let reply = try await jukebox("--json", "play", "c\(index)")
                            let ticket = try #require(reply.stdout.firstMatch(of: /"ticket":(\d+)/).map { Int($0.1)! }, "\(reply)")
                            return (index, ticket)
                        }
                    }
                    return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
                }
                // Wait for the drain after the fifth play: an earlier drain would mean a gap,
                // which the capture then shows.
                #expect(await log.waitUntil { lines in
                    guard let fifth = lines.indices.filter({ lines[$0].contains("played c") }).dropFirst(4).first else { return false }
                    return lines[fifth...].contains { $0.contains("pulse drained") }
                })
                return tickets
            }
            try await rig.stopCapture()
            return run.result
        }
        let capture = try rig.capture(frequencies: Self.tones)
        let segments = capture.segments
        let acknowledged = tickets.sorted { $0.value < $1.value }.map { Self.tones[$0.key] }
        #expect(segments.map(\.frequency) == acknowledged, "\(segments)")
        // Each clip whole (1 s is 100 windows; its first and last may be shared), none at
        // the same time as another, and nothing missing between them.
        #expect(segments.allSatisfy { (99...101).contains($0.windows) }, "\(segments)")
        // At most one shared window at each of the four joins. The first and last windows of
        // the sound are left out: a tone that starts or stops part-way through a window
        // spreads energy over every frequency, and can look like two tones against silence.
        let (first, last) = (segments.first?.start ?? 0, segments.last?.end ?? 0)
        let joins = capture.twoToneWindows.filter { $0 > first && $0 < last - 1 }
        #expect(joins.count <= 4, "\(capture.twoToneWindows), sound from window \(first) to \(last)")
        #expect(CaptureAnalysis.gaps(segments).allSatisfy { $0 <= 1 }, "\(segments)")
    }

    /// A clip's `at` time is heard on its time, within a second. `at` times are whole
    /// minutes, so the test's `TZ` is a zone a few seconds off UTC, chosen so that a local
    /// minute begins ten seconds from now.
    @Test func aFixedTimeIsHeardWithinASecondOfItsTime() async throws {
        let due = Int64(Date().timeIntervalSince1970) + 10
        let offset = (60 - due % 60) % 60
        let local = due + offset
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let time = "\(two(local / 3600 % 24)):\(two(local / 60 % 60))"
        let samples = WAVFile.tone(frequency: Self.tones[0], frames: 44_100, rate: 44_100, channels: 2)
        try folder.write("bell.wav", WAVFile.bytes(samples, encoding: .s16, rate: 44_100, channels: 2))
        try folder.write("s.json", text: #"{ "device": "pulse", "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "bell.wav", "at": [""# + time + #""] } ] }"#)
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--log-level", "debug"]
        let environment = rig.environment.merging(["TZ": "JBX-0:00:\(two(offset))"]) { $1 }
        let (captureStarted, ready) = try await rig.with {
            try await rig.startCapture()
            let captureStarted = Date().timeIntervalSince1970
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: environment) { log in
                let ready = Date().timeIntervalSince1970
                #expect(await log.waitFor("bell: its time"), "queued at its time")
                #expect(await log.waitFor("played bell"))
                return ready
            }
            try await rig.stopCapture()
            return (captureStarted, run.result)
        }
        #expect(ready < Double(due), "jukeboxd was ready \(ready - Double(due)) s after the time it was to play at: the machine is too slow for this test")
        let segments = try rig.capture(frequencies: Self.tones).segments
        #expect(segments.map(\.frequency) == [Self.tones[0]], "\(segments)")
        guard let heard = segments.first else { return }
        // The capture began at or before `captureStarted`, so this is the latest the clip can
        // have been heard.
        let late = captureStarted + Double(heard.start) / 100 - Double(due)
        print("real-time rig: the fixed-time clip was heard \(Int(late * 1000)) ms after its time")
        #expect(late < 1.0, "heard \(Int(late * 1000)) ms after its time")
        #expect(late > -0.3, "heard \(Int(-late * 1000)) ms before its time")
        #expect((98...101).contains(heard.windows), "heard whole: \(heard)")
    }

    @Test func sameFormatClipsBackToBackHaveNoSilenceBetween() async throws {
        let arguments = try session(clips: [0.5, 0.3])
        try await rig.with {
            try await rig.startCapture()
            _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                try await expectSuccess(jukebox("play", "c0", "c1"))
                #expect(await log.waitFor("pulse drained"))
            }
            try await rig.stopCapture()
        }
        let segments = try rig.capture(frequencies: Self.tones).segments
        #expect(segments.map(\.frequency) == [500, 800], "\(segments)")
        #expect(CaptureAnalysis.gaps(segments) == [0], "no silent 10 ms window between the clips: \(segments)")
    }

    @Test func skipEndsTheClipPromptlyAndTheNextFollowsAtOnce() async throws {
        let arguments = try session(clips: [3, 0.5])
        let timing = try await rig.with {
            try await rig.startCapture()
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                try await expectSuccess(jukebox("play", "c0", "c1"))
                // Timed from the device being open, the moment before the first write.
                #expect(await log.waitFor("opened pulse"))
                let started = ContinuousClock.now
                // A second of the clip played, then it is skipped.
                #expect(await played(1))
                let skipped = ContinuousClock.now
                // Straight to the socket: the client's start-up is benchmarked on its own.
                let reply = await RawControl.call(socket, #"{"jsonrpc":"2.0","id":1,"method":"skip"}"#)
                #expect(reply?.contains(#""result""#) == true, "\(reply ?? "no answer")")
                #expect(await log.waitFor("pulse drained"))
                return skipped - started
            }
            try await rig.stopCapture()
            return run.result
        }
        let segments = try rig.capture(frequencies: Self.tones).segments
        #expect(segments.map(\.frequency) == [500, 800], "\(segments)")
        guard segments.count == 2 else { return }
        // The clip was heard for as long as it played before the skip, plus the skip's delay
        // (from the moment the request was sent; the clip's start is taken from the daemon's
        // log line for the device opening, so the figure also holds that line's delivery time).
        let heard = segments[0].seconds
        let delay = heard - timing.inSeconds
        print("real-time rig: the skipped clip fell silent \(Int(delay * 1000)) ms after the skip request was sent")
        // The 50 ms target is a figure to measure, not to race: other suites share the
        // machine and delay the log line this is timed from. What must hold is that the skip
        // cut the clip, rather than letting the device's 500 ms buffer play out.
        // Without the cut, the buffer would play out: about +500 ms. The reference comes
        // before the first audible sample by the sound server's start latency (tens of ms, past
        // 100 ms on a loaded machine), so a prompt skip can come out below zero; far below means
        // the reference is off.
        #expect(delay < 0.25, "skip took \(Int(delay * 1000)) ms to silence the clip")
        #expect(delay > -0.25, "the clip ended \(Int(-delay * 1000)) ms before the skip was sent: the timing reference is off")
        #expect(heard < 2.9)
        #expect(CaptureAnalysis.gaps(segments) == [0] || CaptureAnalysis.gaps(segments) == [1], "\(segments)")
        #expect((49...51).contains(segments[1].windows), "the next clip plays whole: \(segments)")
    }

    @Test func pauseAndResumeContinueWhereItStopped() async throws {
        let arguments = try session(clips: [2])
        let paused = try await rig.with {
            try await rig.startCapture()
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                try await expectSuccess(jukebox("play", "c0"))
                #expect(await log.waitFor("playing c0"))
                #expect(await played(0.7))
                try await expectSuccess(jukebox("pause"))
                let pausedAt = ContinuousClock.now
                // The pause under test lasts half a second: a length chosen, not an event.
                try await Task.sleep(for: .milliseconds(500))
                try await expectSuccess(jukebox("resume"))
                let length = ContinuousClock.now - pausedAt
                #expect(await log.waitFor("pulse drained"))
                return length
            }
            try await rig.stopCapture()
            return run.result
        }
        let segments = try rig.capture(frequencies: Self.tones).segments
        #expect(segments.map(\.frequency) == [500, 500], "\(segments)")
        guard segments.count == 2 else { return }
        // Nothing lost and nothing played twice: the two parts add up to the clip, give or
        // take the fades and a window at each edge.
        let total = segments[0].windows + segments[1].windows
        #expect((197...203).contains(total), "\(segments)")
        let silence = Double(CaptureAnalysis.gaps(segments)[0]) * 0.01
        print("real-time rig: silent for \(silence) s while paused for \(paused.inSeconds) s")
        // The sound stopped for the whole pause: nothing of the clip was heard while paused.
        #expect(silence > paused.inSeconds - 0.1, "silent for \(silence) s while paused for \(paused.inSeconds) s")
        // And it came back. How soon is a figure, not a race: alone on the machine it is
        // within 0.1 s, but with every other suite running beside it on two cores it once took
        // 1.6 s. A resume that waited for a timer or the next clip would take longer still.
        #expect(silence < paused.inSeconds + 3, "silent for \(silence) s while paused for \(paused.inSeconds) s")
    }

    @Test func scheduledClipsPlayOnceEachBeforeAnyRepeats() async throws {
        let arguments = try session(clips: [0.2, 0.2, 0.2, 0.2], interval: "1s-2s")
        let run = try await rig.with {
            try await rig.startCapture()
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                // A whole turn of the bag of four, the refill, and half the next turn.
                #expect(await log.waitUntil { $0.count(where: { $0.contains("played c") }) >= 6 })
            }
            try await rig.stopCapture()
            return run
        }
        let picked = run.lines.compactMap { $0.firstMatch(of: #/played c(\d) \(/#).map { Self.tones[Int($0.1)!] } }
        let segments = try rig.capture(frequencies: Self.tones).segments
        let heard = segments.map(\.frequency)
        #expect(picked.count >= 6, "\(picked)")
        for cycle in stride(from: 0, to: picked.count, by: 4) {
            let picks = picked[cycle..<min(cycle + 4, picked.count)]
            #expect(Set(picks).count == picks.count, "a repeat within a cycle: \(picked)")
        }
        #expect(zip(picked, picked.dropFirst()).allSatisfy { $0 != $1 }, "back to back at a refill: \(picked)")
        // What was heard is what was played (the last may still be playing when the daemon stops).
        #expect(heard.starts(with: picked) || heard == picked.dropLast(), "played \(picked), heard \(heard)")
        // Each gap before a pick is 1 to 2 s: none is heard shorter (less the 0.2 s clip, when
        // the gap is timed from the pick before), nor much longer.
        let gaps = CaptureAnalysis.gaps(segments)
        #expect(gaps.allSatisfy { (70...300).contains($0) }, "silences of \(gaps) hundredths of a second between the clips")
    }

    @Test func unpluggedMidClipTheClipPlaysAgainWholeWhenTheDeviceReturns() async throws {
        let arguments = try session(clips: [4])
        // The rig is stopped and started again inside; `with` takes down whatever is left.
        let run = try await rig.with { try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
            try await expectSuccess(jukebox("play", "c0"))
            #expect(await log.waitFor("playing c0"))
            // The sound server going away is the nearest thing to pulling out a USB DAC here;
            // most of the clip is still to be written when it goes.
            #expect(await played(0.4))
            try await rig.stop()
            #expect(await log.waitFor("stays queued, retrying"))
            let status = try await jukebox("status")
            #expect(status.stdout.contains("retrying in"), "\(status.stdout)")
            // Held while the device comes back and the capture starts, so the capture has
            // the replay from its first frame.
            try await expectSuccess(jukebox("pause"))
            try await rig.start()
            try await rig.startCapture()
            try await expectSuccess(jukebox("resume"))
            #expect(await log.waitFor("played c0"))
            #expect(await log.waitFor("pulse drained"))
            try await rig.stopCapture()
        } }
        #expect(run.status == 0)
        #expect(run.lines.contains { $0.contains("audio device \"pulse\" is working again") }, "\(run.lines)")
        let segments = try rig.capture(frequencies: Self.tones).segments
        #expect(segments.count == 1 && (399...401).contains(segments[0].windows), "the clip plays whole, from its start: \(segments)")
    }

    /// A clip in a format the device refuses (PulseAudio takes at most 32 channels) used to be
    /// retried for ever as a device fault, and `skip` did nothing. It now fails with the
    /// device, the format and a hint, and the next clip plays.
    @Test func aClipTheDeviceCannotTakeFailsAndTheNextPlays() async throws {
        var arguments = try session(clips: [0.3])
        let wide = WAVFile.bytes(Array(repeating: 0.1, count: 40 * 4410), encoding: .s16, rate: 44_100, channels: 40)
        try folder.write("wide.wav", wide)
        try folder.write("s.json", text: #"{ "device": "pulse", "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "wide.wav" }, { "file": "c0.wav" } ] }"#)
        arguments[0] = folder.file("s.json")
        let run = try await rig.with {
            try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                expectSuccess(try await jukebox("play", "wide", "c0"))
                return await log.waitFor("played c0")
            }
        }
        #expect(run.result)
        let failure = run.lines.first { $0.contains("failed wide") } ?? ""
        #expect(failure.contains(#"wide.wav: audio device "pulse": cannot play s16 44100 Hz 40 ch"#), "\(run.lines)")
        #expect(failure.contains("plughw:"), "with the hint")
        #expect(!run.lines.contains { $0.contains("retrying") })
    }
}

extension Duration {
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

extension RealTimeTests {
    /// Edits while a clip plays change the session, not the clip: it is heard whole, once,
    /// and the next clip follows as before.
    @Test func editsWhileAClipPlaysLetItFinishWhole() async throws {
        let arguments = try session(clips: [2, 1])
        let edited = try await rig.with {
            try await rig.startCapture()
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                expectSuccess(try await jukebox("play", "c0", "c1"))
                #expect(await log.waitFor("playing c0"))
                let edits = [
                    try await jukebox("edit", "c0", "--title", "First", "--gain", "-6"),
                    try await jukebox("schedule", "--every", "2h-3h"),
                    try await jukebox("rm", "c1"),
                ]
                #expect(await log.waitUntil { lines in lines.contains { $0.contains("played c1") } && lines.contains { $0.contains("pulse drained") } })
                return edits
            }
            try await rig.stopCapture()
            return run.result
        }
        for edit in edited { expectSuccess(edit) }
        let segments = try rig.capture(frequencies: Self.tones).segments
        #expect(segments.map(\.frequency) == [Self.tones[0], Self.tones[1]], "both play, in order: \(segments)")
        #expect(segments.first.map { (199...201).contains($0.windows) } == true, "the clip playing during the edits is heard whole: \(segments)")
        let text = try String(decoding: folder.read("s.json"), as: UTF8.self)
        #expect(text.contains(#""title": "First""#) && !text.contains("c1.wav"), "\(text)")
    }
}
