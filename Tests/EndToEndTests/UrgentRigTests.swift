import Foundation
import JukeboxProtocol
import JukeboxTestSupport
import Testing

/// Urgent clips on the paced rig: `play --now` cuts the clip playing, is heard at once, and
/// the cut clip goes on after it as `afterCut` says, across a `kill -9` too.
extension RealTimeTests {
    @Test func anUrgentClipIsHeardAtOnceAndTheCutClipGoesOnWhereItWasCut() async throws {
        // c0: 20 s at 500 Hz; c1: 1 s at 800 Hz.
        let arguments = try session(clips: [20, 1])
        let timing = try await rig.with {
            try await rig.startCapture()
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                try await expectSuccess(jukebox("play", "c0"))
                #expect(await log.waitFor("opened pulse"))
                let started = ContinuousClock.now
                #expect(await played(3))
                let asked = ContinuousClock.now
                let reply = try await jukebox("play", "--now", "c1")
                expectSuccess(reply)
                #expect(reply.stdout.contains("queued 2 c1 now (position 1)"), "\(reply.stdout)")
                let queue = try await jukebox("queue")
                #expect(queue.stdout.contains("c0 (by ") && queue.stdout.contains("cut, goes on from 0:0"), "\(queue.stdout)")
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
        // From the command to the urgent clip's first sound: the long clip was heard for as
        // long as it played before the command (timed from the device opening), plus this.
        let heardAfter = Double(segments[1].start - segments[0].start) / 100 - timing.inSeconds
        print("real-time rig: the urgent clip was heard \(Int(heardAfter * 1000)) ms after play --now started")
        #expect(heardAfter < 0.3, "the urgent clip came \(Int(heardAfter * 1000)) ms after the command")
        // The reference (the log line of the device opening) comes before c0's first audible
        // sample by the sound server's start latency, which a loaded machine stretches past
        // 100 ms; the cut-in goes through a stream already running. So a prompt cut can come
        // out below zero, and only far below means the reference is off.
        #expect(heardAfter > -0.25, "the urgent clip was heard before it was asked for: the timing reference is off")
        #expect((99...101).contains(segments[1].windows), "the urgent clip whole: \(segments)")
        // All 20 s of the long clip, in two parts, nothing twice and nothing lost (give or take
        // the fades and a window at each edge).
        let total = segments[0].windows + segments[2].windows
        #expect((1997...2003).contains(total), "\(segments)")
        #expect(CaptureAnalysis.gaps(segments).allSatisfy { $0 <= 1 }, "no silence around the urgent clip: \(segments)")
    }

    /// Killed while the urgent clip plays: the next start plays the urgent clip first (again,
    /// whole), then the cut clip as `afterCut` says.
    @Test(arguments: [AfterCutCase.resume, .restart, .drop])
    func killedWhileAnUrgentClipPlaysItComesBackFirstAndTheCutClipAfterIt(_ afterCut: AfterCutCase) async throws {
        // c0: 4 s at 500 Hz; c1: 2 s at 800 Hz.
        let arguments = try session(clips: [4, 2], extra: #", "afterCut": "\#(afterCut.rawValue)""#)
        let cutAt = try await rig.with {
            try await rig.startCapture()
            let killed = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", stopWith: .kill, environment: rig.environment) { log in
                try await expectSuccess(jukebox("play", "c0"))
                #expect(await played(1))
                try await expectSuccess(jukebox("play", "--now", "c1"))
                #expect(await log.waitFor("playing c1"))
                #expect(await played(0.5))
                struct Reply: Decodable { var result: QueueResult }
                let line = await RawControl.call(socket, #"{"jsonrpc":"2.0","id":1,"method":"queue"}"#) ?? ""
                return try JSONDecoder().decode(Reply.self, from: Data(line.utf8)).result.waiting.first?.resumeAt
            }
            #expect(killed.status == nil, "killed by SIGKILL")
            let again = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                #expect(await log.waitFor("played c1"))
                #expect(await log.waitFor("pulse drained"))
                return try await jukebox("history").stdout
            }
            #expect(again.status == 0)
            try await rig.stopCapture()
            return (killed.result, again.result)
        }
        let (resumeAt, history) = cutAt
        let segments = try rig.capture(frequencies: Self.tones).segments
        let long = segments.filter { $0.frequency == 500 }, bell = segments.filter { $0.frequency == 800 }
        #expect(segments.first?.frequency == 500 && long.count >= 1 && bell.count >= 1, "\(segments)")
        guard let first = long.first, let lastBell = bell.last else { return }
        #expect((199...201).contains(lastBell.windows), "after the restart the urgent clip plays whole: \(segments)")
        switch afterCut {
        case .resume:
            // Where it was cut, as the queue said before the kill.
            #expect(resumeAt.map { abs($0 - Double(first.windows) / 100) < 0.05 } == true, "cut at \(resumeAt ?? -1) s; heard \(first.windows) windows")
            #expect(long.count == 2 && (397...403).contains(long.reduce(0) { $0 + $1.windows }), "all 4 s of it in two parts: \(segments)")
            #expect(segments.last?.frequency == 500, "\(segments)")
        case .restart:
            #expect(resumeAt == 0)
            #expect(long.count == 2 && (399...401).contains(long[1].windows), "again whole: \(segments)")
        case .drop:
            #expect(long.count == 1, "not played again: \(segments)")
            #expect(segments.last?.frequency == 800, "\(segments)")
            #expect(history.contains("c0  skipped"), "the cut clip is in the history as skipped: \(history)")
        }
    }
}

/// The session's `afterCut`, for the rig's tests.
enum AfterCutCase: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case resume, restart, drop
    var testDescription: String { rawValue }
}
