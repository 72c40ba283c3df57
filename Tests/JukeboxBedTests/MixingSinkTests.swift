import Glibc
import JukeboxAudio
import JukeboxTestSupport
import Logging
import Testing
@testable import JukeboxBed

/// The mixer against a real FIFO that the test writes music into, and a device the test
/// paces block by block (8 kHz mono: a mixer block is 400 frames, and music flows once 600
/// have come in).
@Suite("Music bed: the mixer", .timeLimit(.minutes(1)))
struct MixingSinkTests {
    static let format = StreamFormat(sampleRate: 8_000, bits: 16, channels: 1)
    static let block = Int(MixingSink.mixBlock / .milliseconds(1)) * 8
    /// The blocks of silence after which the mixer rests.
    static let restBlocks = Int(MixingSink.restAfter / MixingSink.mixBlock)
    static let music: Float = 0.25
    static let clip: Float = 0.1

    /// A sink with its device and the FIFO's write end (opened once the bed reads it).
    final class Rig: @unchecked Sendable {
        let folder: TemporaryDirectory
        let device: SteppedDevice
        let sink: MixingSink
        var writer: Int32 = -1

        init(
            level: Double = 0.5, device: SteppedDevice = SteppedDevice(), group: gid_t? = nil
        ) async throws {
            folder = try TemporaryDirectory()
            self.device = device
            sink = MixingSink(
                device: device,
                settings: .init(pipe: folder.file("bed"), format: MixingSinkTests.format, level: level, group: group),
                outputLatency: .zero, makeRateConverter: nil, logger: Logger(label: "test"))
            sink.start(musicOn: true, level: 100) {}
        }

        /// Opens the FIFO's write end, once the bed has made and opened it.
        func connect() async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while writer < 0, ContinuousClock.now < deadline {
                writer = Glibc.open(folder.file("bed"), O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                if writer < 0 { try await Task.sleep(for: .milliseconds(5)) }
            }
            try #require(writer >= 0, "the bed never opened its pipe")
        }

        /// Writes `frames` of constant music into the pipe and waits until the bed has it.
        func feed(_ frames: Int, value: Float = MixingSinkTests.music) async throws {
            let before = sink.musicBuffered
            let bytes = WAVFile.pcm16([Double](repeating: Double(value), count: frames))
            #expect(Glibc.write(writer, bytes, bytes.count) == bytes.count)
            let deadline = ContinuousClock.now + .seconds(10)
            // The bed's reader thread takes it in; nothing tells of it, so it is looked for.
            while sink.musicBuffered < before + frames, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
            try #require(sink.musicBuffered >= before + frames)
        }

        /// One mixer block, with a block of music fed first unless `music` is false.
        func step(_ blocks: Int = 1, music: Bool = true) async throws {
            for _ in 0..<blocks {
                if music { try await feed(MixingSinkTests.block) }
                await device.advance()
            }
        }

        func close() async {
            if writer >= 0 { Glibc.close(writer) }
            await sink.retire()
        }
    }

    static func near(_ value: Float, _ expected: Float) -> Bool { abs(value - expected) < 0.001 }
    /// How much later the limiter lets the mix out (32 frames at 8 kHz).
    static let limiterDelay = MixLimiter(channels: 1, sampleRate: 8_000).delayFrames

    @Test("music plays at its level; each level the duck policy sets is glided to within a step, a clip is mixed over the lowered music, and it glides back up")
    func ducksUnderAClip() async throws {
        let rig = try await Rig()
        try await rig.connect()
        try await rig.step(5)
        // The first blocks were made before 75 ms of music had come in; then music at its own level.
        #expect(rig.device.samples.suffix(Self.block).allSatisfy { Self.near($0, Self.music) })
        // Music counts as playing for a second after it last came in: just fed, it is. Looked
        // at as of the moment the feed began, however long a loaded machine takes to get here.
        let fed = ContinuousClock.now
        try await rig.feed(Self.block)
        #expect(rig.sink.bedState(now: fed) == MusicBedState(pipe: rig.folder.file("bed"), on: true, music: .playing, ducked: false))
        #expect(rig.sink.bedState(now: .now + .seconds(2)).music == .waiting, "and a second after it last came in, it waits")

        // The policy's last step down: 50 % is the bed's level (0.5), exactly.
        let lowered = rig.device.samples.count
        rig.sink.setDuckLevel(50)
        try await rig.step(3)
        #expect(rig.sink.bedState.ducked)
        let format = try await rig.sink.open(AudioFormat(sampleFormat: .float32, sampleRate: 8_000, channels: 1))
        #expect(format == AudioFormat(sampleFormat: .float32, sampleRate: 8_000, channels: 1))
        try await rig.sink.write(AudioBuffer(samples: .float32([Float](repeating: Self.clip, count: 2 * Self.block)), channels: 1))
        let drained = Task { try await rig.sink.drain() }
        try await rig.step(4)
        try await drained.value
        await rig.sink.close()
        let raised = rig.device.samples.count
        rig.sink.setDuckLevel(100)
        try await rig.step(5)
        #expect(rig.sink.bedState.ducked == false)
        await rig.close()

        let out = rig.device.samples
        // The block the mixer has made already goes out as it was: the level is taken up
        // with the next one, a block or two after it was set.
        let downStart = try #require(out[lowered...].firstIndex { $0 < Self.music - 0.0001 })
        #expect(downStart <= lowered + Self.limiterDelay + 2 * Self.block)
        // Down over one step of the policy (50 ms, two blocks), never up, to half.
        let down = out[(downStart - 1)..<(downStart + 2 * Self.block)]
        #expect(zip(down, down.dropFirst()).allSatisfy { $0.1 <= $0.0 + 0.0001 })
        #expect(abs(down.last! - Self.music * 0.5) < 0.005)
        let clipStart = try #require(out.firstIndex { Self.near($0, Self.music * 0.5 + Self.clip) })
        #expect(clipStart >= downStart + 2 * Self.block, "mixed over the music once it is down")
        // The whole clip, over the music at half its level, and the music alone at half after it.
        #expect(out[clipStart..<clipStart + 2 * Self.block].allSatisfy { Self.near($0, Self.music * 0.5 + Self.clip) })
        let upStart = try #require(out[(clipStart + 2 * Self.block)...].firstIndex { $0 > Self.music * 0.5 + 0.0001 })
        #expect(out[(clipStart + 2 * Self.block)..<upStart].count >= Self.block)
        #expect(upStart >= raised && upStart <= raised + Self.limiterDelay + 2 * Self.block)
        // Back up over one step, never down, and at full level from there.
        let up = out[(upStart - 1)..<(upStart + 2 * Self.block)]
        #expect(zip(up, up.dropFirst()).allSatisfy { $0.1 >= $0.0 - 0.0001 })
        #expect(out[(upStart + 2 * Self.block)...].allSatisfy { Self.near($0, Self.music) })
        #expect(out.count - (upStart + 2 * Self.block) >= Self.block)
    }

    @Test("a bed started while the music is lowered starts at that level, not faded from full")
    func startsLowered() async throws {
        let folder = try TemporaryDirectory()
        let device = SteppedDevice()
        let sink = MixingSink(
            device: device, settings: .init(pipe: folder.file("bed"), format: Self.format, level: 0.5),
            outputLatency: .zero, makeRateConverter: nil, logger: Logger(label: "test"))
        sink.start(musicOn: true, level: 50) {}
        #expect(sink.bedState.ducked)
        await device.advance()
        #expect(sink.bedState.ducked)
        sink.setDuckLevel(100)
        for _ in 0..<3 { await device.advance() }
        #expect(sink.bedState.ducked == false)
        await sink.retire()
    }

    @Test("with nothing to play for 2 s the mixer rests, the device held with what it holds, and music lets it play on", arguments: [true, false])
    func restsWhileNothingSounds(holdable: Bool) async throws {
        let rig = try await Rig(device: SteppedDevice(holdable: holdable))
        try await rig.connect()
        // Half of the 2 s of silence before it rests; then room for three halves more.
        await rig.device.advance(Self.restBlocks / 2)
        rig.device.allow(Self.restBlocks * 3 / 2)
        var holds = rig.device.holds.makeAsyncIterator()
        guard holdable else {
            // A device that cannot be held is written to without a break.
            await rig.device.advance(1)
            #expect(rig.device.permitsLeft == 0, "every block written")
            await rig.close()
            return
        }
        #expect(await holds.next() == true, "held")
        let left = rig.device.permitsLeft
        #expect(left >= Self.restBlocks * 7 / 8, "no block written while it rests: \(left) of \(Self.restBlocks * 3 / 2) left")
        // Music comes in (what the bed holds before it plays): the device plays on, and the
        // music is written.
        let written = rig.device.samples.count
        let music = WAVFile.pcm16([Double](repeating: Double(Self.music), count: 5 * Self.block))
        #expect(Glibc.write(rig.writer, music, music.count) == music.count)
        #expect(await holds.next() == false, "let go")
        while rig.device.permitsLeft > 0 { await Task.yield() }
        await rig.device.advance(1)
        #expect(rig.device.samples[written...].contains { Self.near($0, Self.music) }, "the music, after the rest")
        await rig.close()
    }

    @Test("a clip wakes a resting mixer, and is written whole")
    func aClipWakesARestingMixer() async throws {
        let rig = try await Rig()
        try await rig.connect()
        await rig.device.advance(Self.restBlocks / 2)
        rig.device.allow(Self.restBlocks * 3 / 4)
        var holds = rig.device.holds.makeAsyncIterator()
        #expect(await holds.next() == true)
        _ = try await rig.sink.open(AudioFormat(sampleFormat: .float32, sampleRate: 8_000, channels: 1))
        try await rig.sink.write(AudioBuffer(samples: .float32([Float](repeating: Self.clip, count: Self.block)), channels: 1))
        #expect(await holds.next() == false)
        let drained = Task { try await rig.sink.drain() }
        while rig.device.permitsLeft > 0 { await Task.yield() }
        await rig.device.advance(3)
        try await drained.value
        #expect(rig.device.samples.filter { Self.near($0, Self.clip) }.count == Self.block, "the whole clip")
        await rig.close()
    }

    @Test("a bed that stops writing is silence, and a clip plays without waiting; music that comes back is picked up at the next block once 75 ms is in")
    func writerThatStops() async throws {
        let rig = try await Rig()
        try await rig.connect()
        try await rig.step(2)
        // Nothing more comes in: the device still gets a block each time, of silence (once
        // what came in has played, two blocks at most, and the limiter's delay after it).
        await rig.device.advance(5)
        let before = rig.device.samples.count
        #expect(rig.device.samples.suffix(2 * Self.block).allSatisfy { $0 == 0 })
        // A clip is mixed at once: there is no music to lower first.
        _ = try await rig.sink.open(AudioFormat(sampleFormat: .float32, sampleRate: 8_000, channels: 1))
        try await rig.sink.write(AudioBuffer(samples: .float32([Float](repeating: Self.clip, count: Self.block)), channels: 1))
        await rig.device.advance(2)
        let clipStart = try #require(rig.device.samples.firstIndex { Self.near($0, Self.clip) })
        #expect(clipStart - before <= Self.block + Self.limiterDelay)
        await rig.sink.close()
        // The writer starts again: 75 ms in, and the next block has music.
        try await rig.feed(3 * Self.block)
        await rig.device.advance(2)
        #expect(rig.device.samples.suffix(Self.block).contains { $0 > 0.01 })
        await rig.close()
    }

    @Test("a stray byte a writer left is dropped once nothing follows it, and the next writer's music is heard at its level, as it was written")
    func strayByteIsDropped() async throws {
        let rig = try await Rig()
        try await rig.connect()
        // One byte of a two-byte frame, then nothing: after `partialFrameWait` it is dropped.
        #expect(Glibc.write(rig.writer, [0x7F], 1) == 1)
        let deadline = ContinuousClock.now + .seconds(10)
        while rig.sink.partialFramesDropped == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(rig.sink.partialFramesDropped == 1)
        // The next writer's frames are whole: the music at its level, not noise (a block after
        // it flows, and one for the limiter's delay).
        try await rig.step(5)
        let heard = rig.device.samples.suffix(Self.block)
        #expect(heard.allSatisfy { Self.near($0, Self.music) }, "\(Array(heard.prefix(8)))")
        await rig.close()
    }

    @Test("with a group, the FIFO the bed makes is that group's, mode 0660; without, as the umask leaves it")
    func theFIFOIsGivenToItsGroup() async throws {
        let group = getegid()
        let rig = try await Rig(group: group)
        try await rig.connect()
        var info = stat()
        #expect(stat(rig.folder.file("bed"), &info) == 0)
        #expect(info.st_gid == group && info.st_mode & 0o777 == 0o660, "mode \(String(info.st_mode & 0o777, radix: 8))")
        await rig.close()
    }

    @Test("a frame split across two writes close together is kept whole")
    func splitFrameIsKept() async throws {
        let rig = try await Rig()
        try await rig.connect()
        let bytes = WAVFile.pcm16([Double](repeating: Double(Self.music), count: 3 * Self.block))
        // The first write ends mid-frame; the second follows at once.
        #expect(Glibc.write(rig.writer, Array(bytes[..<101]), 101) == 101)
        #expect(Glibc.write(rig.writer, Array(bytes[101...]), bytes.count - 101) == bytes.count - 101)
        try await rig.step(3)
        #expect(rig.sink.partialFramesDropped == 0)
        let heard = rig.device.samples.suffix(Self.block)
        #expect(heard.allSatisfy { Self.near($0, Self.music) }, "\(Array(heard.prefix(8)))")
        await rig.close()
    }

    @Test("bed off fades the music out and on brings it back; clips play either way")
    func offAndOn() async throws {
        let rig = try await Rig()
        try await rig.connect()
        try await rig.step(4)
        rig.sink.setMusicOn(false)
        // 90 dB in 200 ms: eight blocks.
        try await rig.step(10)
        #expect(rig.sink.bedState.on == false)
        #expect(rig.device.samples.suffix(Self.block).allSatisfy { $0 == 0 })
        rig.sink.setMusicOn(true)
        // Eight blocks, and one for the limiter's delay.
        try await rig.step(11)
        #expect(rig.device.samples.suffix(Self.block).allSatisfy { Self.near($0, Self.music) })
        await rig.close()
    }

    @Test("music and clip at full scale together stay under -1 dBTP")
    func neverClips() async throws {
        let rig = try await Rig(level: 1, device: SteppedDevice(sampleFormat: .float32))
        try await rig.connect()
        _ = try await rig.sink.open(AudioFormat(sampleFormat: .float32, sampleRate: 8_000, channels: 1))
        for _ in 0..<6 {
            try await rig.feed(Self.block, value: 0.9)
            try await rig.sink.write(AudioBuffer(samples: .float32([Float](repeating: 0.9, count: Self.block)), channels: 1))
            await rig.device.advance()
        }
        await rig.close()
        let out = rig.device.samples
        #expect(out.max()! <= MixLimiter.defaultCeiling)
        // The sum was brought down to just under the ceiling, not left at the music alone.
        #expect(out.suffix(Self.block).allSatisfy { $0 > 0.83 })
    }

    @Test("a device that cannot open is the clips' error, with its name")
    func deviceThatFails() async throws {
        let failure = AudioDeviceError(code: .notFound, device: "stepped", operation: "open", reason: "no such device")
        let rig = try await Rig(device: SteppedDevice(openFailure: failure))
        await #expect(throws: failure) {
            _ = try await rig.sink.open(AudioFormat(sampleFormat: .float32, sampleRate: 8_000, channels: 1))
        }
        await rig.close()
    }

    @Test("a cut takes back what the mixer has not taken, all but a mixer block")
    func rewindKeepsABlock() async throws {
        let rig = try await Rig()
        _ = try await rig.sink.open(AudioFormat(sampleFormat: .float32, sampleRate: 8_000, channels: 1))
        try await rig.sink.write(AudioBuffer(samples: .float32([Float](repeating: Self.clip, count: 1_600)), channels: 1))
        #expect(await rig.sink.rewind(upTo: .max, keeping: 80) == 1_600 - Self.block)
        #expect(await rig.sink.rewind(upTo: .max, keeping: 80) == 0)
        #expect(await rig.sink.cancel() == Self.block)
        await rig.close()
    }
}
