import JukeboxCore
import Testing
import JukeboxCoreTestSupport

@Suite("Player", .timeLimit(.minutes(1)))
struct PlayerTests {
    let sink = FakeSink()
    let idleClock = ManualClock()

    func player(_ decoder: FakeDecoder, volume: Double = 1, options: PlaybackOptions = PlaybackOptions(idleTimeout: .seconds(5))) -> Player {
        Player(sink: sink, decoder: decoder, clock: idleClock, volume: volume, options: options, logger: .quiet)
    }

    @Test func sameFormatClipsShareOneOpenDeviceWithNothingBetween() async throws {
        let player = player(Fixtures.decoder([("a", 1, 120), ("b", 2, 80)]))
        #expect(try await player.play(Fixtures.clip("a")) == .ended(.completed(duration: .milliseconds(120))))
        #expect(try await player.play(Fixtures.clip("b")) == .ended(.completed(duration: .milliseconds(80))))
        let format = AudioFormat(sampleFormat: .s16, sampleRate: 1000, channels: 1)
        #expect(await sink.events == [
            .open(format), .write(tag: 1, frames: 64), .write(tag: 1, frames: 56),
            .write(tag: 2, frames: 64), .write(tag: 2, frames: 16),
        ])
    }

    @Test func idleDeviceIsDrainedThenClosedAfterTheIdleTimeout() async throws {
        let player = player(Fixtures.decoder([("a", 1, 50)]))
        _ = try await player.play(Fixtures.clip("a"))
        await player.becameIdle()
        #expect(await sink.events.last == .drain)
        await idleClock.waitForSleepers(1)
        idleClock.advance(by: .seconds(5))
        await sink.wait(until: { $0.last == .close })
        #expect(await !player.isDeviceOpen)
    }

    @Test func playingAgainBeforeTheIdleTimeoutKeepsTheDeviceOpen() async throws {
        let player = player(Fixtures.decoder([("a", 1, 50)]))
        _ = try await player.play(Fixtures.clip("a"))
        await player.becameIdle()
        await idleClock.waitForSleepers(1)
        _ = try await player.play(Fixtures.clip("a"))
        idleClock.advance(by: .seconds(5))
        #expect(await player.isDeviceOpen)
        #expect(await sink.events.filter { $0 == .close || $0 == .open(AudioFormat(sampleFormat: .s16, sampleRate: 1000, channels: 1)) }.count == 1)
    }

    @Test func keptOpenDeviceIsFedSilenceWhileIdleAndNeverDrainedOrClosed() async throws {
        let player = player(
            Fixtures.decoder([("a", 1, 50), ("b", 2, 50)]), options: PlaybackOptions(keepDeviceOpen: .always, idleTimeout: .seconds(5)))
        _ = try await player.play(Fixtures.clip("a"))
        await player.becameIdle()
        await sink.wait { $0.filter { $0 == .write(tag: 0, frames: 64) }.count >= 3 }
        _ = try await player.play(Fixtures.clip("b"))
        #expect(await player.isDeviceOpen)
        let events = await sink.events
        let silence = events.dropFirst(2).prefix { $0 == .write(tag: 0, frames: 64) }.count
        let format = AudioFormat(sampleFormat: .s16, sampleRate: 1000, channels: 1)
        // The silence follows clip a without a drain; what is queued of it is dropped (this
        // device cannot rewind) so b starts at once.
        #expect(silence >= 3)
        #expect(events == [.open(format), .write(tag: 1, frames: 50)]
            + Array(repeating: .write(tag: 0, frames: 64), count: silence) + [.cancel, .write(tag: 2, frames: 50)])
    }

    @Test func switchingToKeepOpenWhileIdleStartsTheSilence() async throws {
        let player = player(Fixtures.decoder([("a", 1, 50)]))
        _ = try await player.play(Fixtures.clip("a"))
        await player.becameIdle()
        await idleClock.waitForSleepers(1)
        await player.configure(PlaybackOptions(keepDeviceOpen: .always, idleTimeout: .seconds(5)))
        await sink.wait { $0.last == .write(tag: 0, frames: 64) }
        // The idle close was called off: the device is still open past its old deadline.
        idleClock.advance(by: .seconds(5))
        #expect(await player.isDeviceOpen)
        await player.shutdown()
        #expect(await sink.events.filter { $0 == .close }.count == 1)
        #expect(await sink.events.last == .close)
    }

    @Test func leadInIsWrittenOnceEachTimeTheDeviceOpens() async throws {
        let player = player(Fixtures.decoder([("a", 1, 50)]), options: PlaybackOptions(leadIn: .milliseconds(300)))
        _ = try await player.play(Fixtures.clip("a"))
        _ = try await player.play(Fixtures.clip("a"))
        let format = AudioFormat(sampleFormat: .s16, sampleRate: 1000, channels: 1)
        #expect(await sink.events == [.open(format), .write(tag: 0, frames: 300), .write(tag: 1, frames: 50), .write(tag: 1, frames: 50)])
    }

    @Test func formatChangeDrainsAndReopens() async throws {
        var decoder = Fixtures.decoder([("a", 1, 50), ("b", 2, 50)])
        let stereo = AudioFormat(sampleFormat: .s16, sampleRate: 48_000, channels: 2)
        decoder.clips["/clips/b.wav"]?.format = stereo
        let player = player(decoder)
        _ = try await player.play(Fixtures.clip("a"))
        _ = try await player.play(Fixtures.clip("b"))
        let steps = await sink.events.filter { if case .write = $0 { false } else { true } }
        #expect(steps == [.open(AudioFormat(sampleFormat: .s16, sampleRate: 1000, channels: 1)), .drain, .close, .open(stereo)])
    }

    @Test func gainAndVolumeSaturateInsteadOfWrapping() async throws {
        var decoder = Fixtures.decoder([("loud", 30_000, 10), ("soft", 1000, 10)])
        decoder.clips["/clips/neg.wav"] = FakeDecoder.Spec(tag: -30_000, frames: 10)
        let player = player(decoder)
        var loud = Fixtures.clip("loud")
        loud.gainDecibels = 6
        _ = try await player.play(loud)
        var neg = Fixtures.clip("neg")
        neg.gainDecibels = 12
        _ = try await player.play(neg)
        await player.setVolume(0.5)
        _ = try await player.play(Fixtures.clip("soft"))
        #expect(await sink.writeRuns == [32_767, -32_768, 500])
    }

    @Test func aClipAtALevelOfItsOwnStopsAfterItsLengthFadingOutAndKeepsItsLevel() async throws {
        let player = player(Fixtures.decoder([("long", 1000, 1000), ("next", 1000, 100)]), volume: 0.8)
        // 300 ms of a 1 s clip at 1 kHz, at half: up to the 10 ms fade at 290, then the fade.
        let played = try await player.play(Fixtures.clip("long"), playing: .init(volume: 0.5, stopAfter: .milliseconds(300)))
        #expect(played == .ended(.completed(duration: .milliseconds(300))))
        let writes = await sink.events.compactMap { if case .write(let tag, let frames) = $0 { [tag, frames] } else { nil } }
        #expect(writes == [[500, 64], [500, 64], [500, 64], [500, 64], [500, 34], [500, 10]])
        // The fade ends near silence, and the next clip is at the volume again.
        _ = try await player.play(Fixtures.clip("next"))
        #expect(await sink.writeRuns == [500, 800])
        // A length past the clip's end plays it whole, with no fade at its end.
        let whole = try await player.play(Fixtures.clip("next"), playing: .init(stopAfter: .seconds(5)))
        #expect(whole == .ended(.completed(duration: .milliseconds(100))))
    }

    @Test func aChangeOfVolumeLeavesAClipAtALevelOfItsOwnAsItIs() async throws {
        let player = player(Fixtures.decoder([("long", 1000, 10_000)]))
        await sink.gateWrites(true)
        let playing = Task { try await player.play(Fixtures.clip("long"), playing: .init(volume: 0.25, stopAfter: .milliseconds(500))) }
        await sink.waitForGatedWrite()
        await player.setVolume(0.5)
        await sink.gateWrites(false)
        #expect(try await playing.value == .ended(.completed(duration: .milliseconds(500))))
        #expect(await sink.writeRuns == [250])
        #expect(await player.volume == 0.5)
    }

    @Test func deviceThatRefusesTheFormatGetsConvertedSamples() async throws {
        var decoder = Fixtures.decoder([("wide", 5 << 16, 10)])
        decoder.clips["/clips/wide.wav"]?.format = AudioFormat(sampleFormat: .s32, sampleRate: 1000, channels: 1)
        await sink.accept([.s16])
        let player = player(decoder)
        _ = try await player.play(Fixtures.clip("wide"))
        #expect(await sink.writeRuns == [5])
    }

    @Test func stopCurrentEndsTheClipAndDropsTheBuffer() async throws {
        let player = player(Fixtures.decoder([("long", 1, 10_000)]))
        await sink.gateWrites(true)
        let playing = Task { try await player.play(Fixtures.clip("long")) }
        await sink.waitForGatedWrite()
        await player.stopCurrent()
        await sink.gateWrites(false)
        #expect(try await playing.value == .ended(.stopped))
        #expect(await sink.events.last == .cancel)
        #expect(await sink.framesWritten(tag: 1) < 10_000)
    }

    @Test func cancellationStopsPromptly() async throws {
        let player = player(Fixtures.decoder([("long", 1, 10_000)]))
        await sink.gateWrites(true)
        let playing = Task { try await player.play(Fixtures.clip("long")) }
        await sink.waitForGatedWrite()
        playing.cancel()
        await sink.gateWrites(false)
        #expect(try await playing.value == .ended(.stopped))
        await player.shutdown()
        #expect(await sink.events.suffix(2) == [.cancel, .close])
    }

    @Test func unreadableClipFailsWithoutTouchingTheDevice() async throws {
        var decoder = Fixtures.decoder([("bad", 1, 10)])
        decoder.clips["/clips/bad.wav"]?.failure = "not an audio file"
        let player = player(decoder)
        #expect(try await player.play(Fixtures.clip("bad")) == .ended(.failed(reason: "bad.wav: not an audio file")))
        #expect(try await player.play(Fixtures.clip("gone")) == .ended(.failed(reason: "gone.wav: no such file")))
        #expect(await sink.events.isEmpty)
    }
}

@Suite("Sample math", .timeLimit(.minutes(1)))
struct SampleMathTests {
    @Test func unityLeavesSamplesBitExact() {
        var buffer = AudioBuffer(samples: .s32([Int32.max, Int32.min, 12_345]), channels: 1)
        SampleMath.scale(&buffer, by: 1)
        #expect(buffer.samples == .s32([Int32.max, Int32.min, 12_345]))
    }

    @Test func scalingClampsEveryFormat() {
        var s16 = AudioBuffer(samples: .s16([20_000, -20_000, 100]), channels: 1)
        SampleMath.scale(&s16, by: 2)
        #expect(s16.samples == .s16([32_767, -32_768, 200]))
        var s32 = AudioBuffer(samples: .s32([Int32.max / 2 + 10, Int32.min / 2 - 10]), channels: 2)
        SampleMath.scale(&s32, by: 2)
        #expect(s32.samples == .s32([Int32.max, Int32.min]))
        var float = AudioBuffer(samples: .float32([0.75, -0.75, 0.25]), channels: 1)
        SampleMath.scale(&float, by: 2)
        #expect(float.samples == .float32([1, -1, 0.5]))
    }

    @Test func decibelsToLinear() {
        #expect(SampleMath.linearGain(decibels: 0) == 1)
        #expect(abs(SampleMath.linearGain(decibels: -6) - 0.501) < 0.001)
        #expect(abs(SampleMath.linearGain(decibels: 20) - 10) < 1e-9)
    }

    @Test func conversions() {
        let s16 = AudioBuffer(samples: .s16([16_384, -32_768]), channels: 1)
        #expect(SampleMath.convert(s16, to: .s32).samples == .s32([16_384 << 16, Int32.min]))
        #expect(SampleMath.convert(s16, to: .float32).samples == .float32([0.5, -1]))
        #expect(SampleMath.convert(SampleMath.convert(s16, to: .s32), to: .s16) == s16)
        let float = AudioBuffer(samples: .float32([2, -2, 0.5]), channels: 1)
        #expect(SampleMath.convert(float, to: .s16).samples == .s16([32_767, -32_767, 16_384]))
    }
}
