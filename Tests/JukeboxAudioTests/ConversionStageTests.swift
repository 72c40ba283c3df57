import JukeboxAudio
import JukeboxResample
import Synchronization
import Testing

/// The conversion stage in front of every output: what the output took is what it gets,
/// whatever the clip's format, and frame counts come back in the clip's frames.
@Suite("Conversion stage")
struct ConversionStageTests {
    /// An output with a fixed format, which records what it is given and can end a write early.
    final class FixedOutput: AudioSink {
        let format: AudioFormat
        let written = Mutex<[AudioBuffer]>([])
        /// The next write takes only this many frames and is interrupted.
        let interruptAfter = Mutex<Int?>(nil)
        init(_ format: AudioFormat) { self.format = format }
        var deviceName: String { "fixed" }
        var underruns: Int { 0 }
        func open(_ requested: AudioFormat) async throws -> AudioFormat { format }
        func write(_ buffer: AudioBuffer) async throws {
            written.withLock { $0.append(buffer) }
            if let taken = interruptAfter.withLock({ value in defer { value = nil }; return value }) {
                throw WriteInterrupted(framesWritten: taken)
            }
        }
        func interrupt() {}
        func drain() async throws {}
        func cancel() async -> Int { 4_800 }
        func rewind(upTo maxFrames: Int, keeping: Int) async -> Int { 0 }
        func close() async {}
    }

    @Test func monoGoesToEveryChannelAndChannelsAverageIntoMono() {
        #expect(SampleMath.mapChannels([0.5, -0.25], from: 1, to: 2) == [0.5, 0.5, -0.25, -0.25])
        #expect(SampleMath.mapChannels([0.5, 0.25, -1, 1], from: 2, to: 1) == [0.375, 0])
        #expect(SampleMath.mapChannels([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], from: 6, to: 2) == [0.1, 0.2])
        #expect(SampleMath.mapChannels([0.1, 0.2], from: 2, to: 2) == [0.1, 0.2])
    }

    @Test func integerInputIsReadAsFloat() {
        #expect(SampleMath.floats(AudioBuffer(samples: .s16([16_384, -32_768]), channels: 1)) == [0.5, -1])
        #expect(SampleMath.floats(AudioBuffer(samples: .s32([1_073_741_824]), channels: 1)) == [0.5])
    }

    @Test func aMono44kClipReachesA48kStereoStreamWhole() async throws {
        let output = FixedOutput(AudioFormat(sampleFormat: .float32, sampleRate: 48_000, channels: 2))
        let stage = ConvertingSink(output) { from, to, channels in try Resampler(inputRate: from, outputRate: to, channels: channels) }
        let clip = AudioFormat(sampleFormat: .s16, sampleRate: 44_100, channels: 1)
        #expect(try await stage.open(clip) == clip, "the player writes in the clip's own format")
        for _ in 0..<10 { try await stage.write(AudioBuffer(samples: .s16(Array(repeating: 8_192, count: 4_410)), channels: 1)) }
        try await stage.drain()
        let blocks = output.written.withLock { $0 }
        #expect(blocks.allSatisfy { $0.channels == 2 && $0.samples.format == .float32 })
        let frames = blocks.reduce(0) { $0 + $1.frames }
        #expect(abs(frames - 48_000) <= 2, "one second at 48 kHz, with the converter's tail: \(frames) frames")
        // Past the filter's start, a constant stays the constant, in both channels.
        if case .float32(let samples) = blocks[5].samples { #expect(samples.allSatisfy { abs($0 - 0.25) < 0.001 }) }
    }

    @Test func framesTheOutputCountsComeBackInTheClipsFrames() async throws {
        let output = FixedOutput(AudioFormat(sampleFormat: .float32, sampleRate: 48_000, channels: 2))
        let stage = ConvertingSink(output) { from, to, channels in try Resampler(inputRate: from, outputRate: to, channels: channels) }
        _ = try await stage.open(AudioFormat(sampleFormat: .float32, sampleRate: 24_000, channels: 2))
        output.interruptAfter.withLock { $0 = 2_000 }
        await #expect(throws: WriteInterrupted.self) {
            try await stage.write(AudioBuffer(samples: .float32(Array(repeating: 0, count: 4_800)), channels: 2))
        }
        do {
            output.interruptAfter.withLock { $0 = 2_000 }
            try await stage.write(AudioBuffer(samples: .float32(Array(repeating: 0, count: 4_800)), channels: 2))
        } catch let interrupted as WriteInterrupted {
            #expect(interrupted.framesWritten == 1_000, "2 000 frames at 48 kHz are 1 000 of a 24 kHz clip")
        }
        #expect(await stage.cancel() == 2_400)
    }

    @Test func withoutARateConverterAnotherRateIsRefusedByName() async throws {
        let stage = ConvertingSink(FixedOutput(AudioFormat(sampleFormat: .s16, sampleRate: 48_000, channels: 2)))
        await #expect {
            try await stage.open(AudioFormat(sampleFormat: .s16, sampleRate: 44_100, channels: 2))
        } throws: { error in
            (error as? AudioDeviceError)?.code == .unsupportedFormat && "\(error)".contains("fixed")
        }
    }

    @Test func onlyTheSampleFormatDiffersSoSamplesAreConvertedOneByOne() async throws {
        let output = FixedOutput(AudioFormat(sampleFormat: .s32, sampleRate: 44_100, channels: 2))
        let stage = ConvertingSink(output)
        _ = try await stage.open(AudioFormat(sampleFormat: .s16, sampleRate: 44_100, channels: 2))
        try await stage.write(AudioBuffer(samples: .s16([1, -1, 32_767, -32_768]), channels: 2))
        #expect(output.written.withLock { $0 } == [AudioBuffer(samples: .s32([65_536, -65_536, 2_147_418_112, -2_147_483_648]), channels: 2)])
    }
}
