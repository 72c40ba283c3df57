import JukeboxALSA
import JukeboxCore
import JukeboxSndFile
import JukeboxTestSupport
import Logging
import Testing

/// Lead-in and click-free cuts, seen in the samples that reach real ALSA (the `file` plugin).
@Suite("Lead-in and fades through the file plugin", .timeLimit(.minutes(1)))
struct CutTests {
    let folder: TemporaryDirectory
    let rate = 44_100
    /// Frames in one of the player's blocks at `rate`: writes are counted in blocks, so the
    /// sinks here take 250 ms at a time, a few writes to a clip.
    static let block = 44_100 / 4
    init() throws { folder = try TemporaryDirectory() }

    var device: String { "file:FILE=\(folder.file("out.raw")),FORMAT=raw" }

    func player(_ sink: any AudioSink, _ options: PlaybackOptions) -> Player {
        Player(sink: sink, decoder: SndFileDecoder(), options: options, logger: .quiet)
    }

    /// A stereo tone clip and its 16-bit samples as ALSA should receive them.
    func tone(_ name: String, _ frequency: Double, seconds: Double) throws -> (PlayableClip, [Int16]) {
        let samples = WAVFile.tone(frequency: frequency, frames: Int(seconds * Double(rate)), rate: rate, channels: 2)
        let path = try folder.write(name, WAVFile.bytes(samples, encoding: .s16, rate: rate, channels: 2))
        return (PlayableClip(id: name, source: ClipSource(file: name, path: path)), samples.map { Int16(($0 * 32_767).rounded()) })
    }

    func output() throws -> [Int16] {
        let bytes = try folder.read("out.raw")
        return stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    /// `samples` (stereo) with a straight-line gain from `start` towards `end` over its frames.
    func ramped(_ samples: ArraySlice<Int16>, from start: Double, to end: Double) -> [Int16] {
        let frames = samples.count / 2
        return samples.enumerated().map { index, sample in
            Int16(clamping: Int32((Double(sample) * (start + (end - start) * Double(index / 2) / Double(frames))).rounded()))
        }
    }

    /// Plays `clip` on a player whose write number `holdAt` is held, and does `action` (skip or
    /// pause) while it is held, so the cut lands at a known place mid-clip.
    func play(
        _ clip: PlayableClip, holdAt: Int, fade: Duration, while action: @escaping @Sendable (Player, HeldSink) async -> Void
    ) async throws -> (Player, PlayOutcome?) {
        let held = HeldSink(AlsaSink(device: device, blockDuration: .milliseconds(250)), holdAt: holdAt)
        let player = player(held, PlaybackOptions(fade: fade))
        async let played = player.play(clip)
        await held.waitUntilHeld()
        await action(player, held)
        return (player, try await played.outcome)
    }

    @Test func leadInIsSilenceBeforeTheFirstClipOnly() async throws {
        let (a, aSamples) = try tone("a.wav", 440, seconds: 0.3)
        let (b, bSamples) = try tone("b.wav", 660, seconds: 0.2)
        let player = player(AlsaSink(device: device, blockDuration: .milliseconds(250)), PlaybackOptions(leadIn: .milliseconds(250)))
        _ = try await player.play(a)
        _ = try await player.play(b)
        await player.shutdown()
        let leadIn = [Int16](repeating: 0, count: rate / 4 * 2)
        #expect(try output() == leadIn + aSamples + bSamples)
    }

    @Test func skippedClipFadesOutAndTheNextFollowsAtOnce() async throws {
        let (a, aSamples) = try tone("a.wav", 440, seconds: 2)
        let (b, bSamples) = try tone("b.wav", 660, seconds: 0.3)
        let (player, outcome) = try await play(a, holdAt: 3, fade: .milliseconds(10)) { player, held in
            await player.stopCurrent()
            await held.release()
        }
        #expect(outcome == .stopped)
        _ = try await player.play(b)
        await player.shutdown()

        let out = try output()
        let fade = rate / 100 * 2
        let heard = out.count - fade - bSamples.count
        // Some of clip a was taken back (it had been written, not played), the rest is exact,
        // then a 10 ms ramp down of the samples that followed, then clip b without a gap.
        #expect(heard > 0 && heard < 4 * Self.block * 2)
        #expect(Array(out[..<heard]) == Array(aSamples[..<heard]))
        #expect(Array(out[heard..<heard + fade]) == ramped(aSamples[heard..<heard + fade], from: 1, to: 0))
        #expect(Array(out[(heard + fade)...]) == bSamples)
    }

    @Test func pauseFadesOutAndResumeFadesInWhereItStopped() async throws {
        let (a, aSamples) = try tone("a.wav", 440, seconds: 1)
        // Paused and resumed through the queue, which owns the pause, as a client does it.
        let held = HeldSink(AlsaSink(device: device, blockDuration: .milliseconds(250)), holdAt: 2)
        let events = EventBus()
        let queue = ClipPlayQueue(
            player: player(held, PlaybackOptions(fade: .milliseconds(5))), events: events,
            logger: .quiet)
        let finished = events.subscribe()
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(a, origin: .client("test"))
        await held.waitUntilHeld()
        await queue.pause()
        await held.release()
        await held.waitForDrain()
        await queue.resume()
        var outcome: PlayOutcome?
        for await event in finished { if case .finished(let play) = event { outcome = play.outcome; break } }
        #expect(outcome == .completed(duration: .seconds(1)))
        // Stopping the queue shuts the player down and closes the file.
        consumer.cancel()
        _ = try? await consumer.value

        let out = try output()
        let fade = rate / 200 * 2
        // Frames written but not heard were taken back. The listener hears the clip up to
        // the cut, a fade-out, then a fade-in of the samples after it and the rest: every
        // frame once, so the output is as long as the clip.
        func expected(cutAt frame: Int) -> [Int16] {
            let cut = frame * 2
            return Array(aSamples[..<cut]) + ramped(aSamples[cut..<cut + fade], from: 1, to: 0)
                + ramped(aSamples[(cut + fade)..<(cut + 2 * fade)], from: 0, to: 1) + Array(aSamples[(cut + 2 * fade)...])
        }
        // The fade's first frame has full gain, so the first differing sample lies just after the cut.
        let firstDifference = (0..<out.count).first { out[$0] != aSamples[$0] } ?? 0
        #expect(firstDifference > 0 && firstDifference < 3 * Self.block * 2)
        #expect(((firstDifference / 2 - 3)...(firstDifference / 2)).contains { out == expected(cutAt: $0) })
    }

    /// A volume change mid-clip does not wait for the device's buffer to play out: what the
    /// device holds but has not played is taken back and written again, ramping from the old
    /// volume to the new over the fade, and every frame is still heard once.
    @Test func aVolumeChangeIsHeardAtOnceWithARamp() async throws {
        let (a, aSamples) = try tone("a.wav", 440, seconds: 2)
        let (player, outcome) = try await play(a, holdAt: 3, fade: .milliseconds(10)) { player, held in
            await player.setVolume(0.5)
            await held.release()
        }
        #expect(outcome == .completed(duration: .seconds(2)))
        await player.shutdown()

        let out = try output()
        #expect(out.count == aSamples.count)
        let fade = rate / 100 * 2
        let changed = (0..<out.count).first { out[$0] != aSamples[$0] } ?? 0
        // Without the retake the change would start with the fourth block, after the three written.
        #expect(changed > 0 && changed < 3 * Self.block * 2, "changed at frame \(changed / 2)")
        func expected(from frame: Int) -> [Int16] {
            let at = frame * 2
            return Array(aSamples[..<at]) + ramped(aSamples[at..<at + fade], from: 1, to: 0.5)
                + aSamples[(at + fade)...].map { Int16((Double($0) * 0.5).rounded()) }
        }
        // The ramp's first frame is at the old volume, so the first change lies just after it.
        #expect(((changed / 2 - 3)...(changed / 2)).contains { out == expected(from: $0) })
    }

    @Test func withoutAFadeASkipCutsAtTheLastWrittenFrame() async throws {
        let (a, aSamples) = try tone("a.wav", 440, seconds: 2)
        let (player, outcome) = try await play(a, holdAt: 4, fade: .zero) { player, held in
            await player.stopCurrent()
            await held.release()
        }
        #expect(outcome == .stopped)
        await player.shutdown()
        // The plugin writes what it was given; with no fade nothing is rewritten.
        let out = try output()
        #expect(out == Array(aSamples[..<(5 * Self.block * 2)]))
    }
}
