import JukeboxCore
import Testing
import JukeboxCoreTestSupport

/// Float files may hold NaN or ±Inf (a broken encoder, a corrupt file). None of them may trap
/// on the way to an integer device: NaN plays as silence and ±Inf at full scale.
@Suite("Sample math: NaN and infinity", .timeLimit(.minutes(1)))
struct SampleMathFaultTests {
    static let odd: [Float] = [.nan, -.nan, .infinity, -.infinity, .signalingNaN, 2, -2, 0.5, .greatestFiniteMagnitude]

    func float(_ samples: [Float]) -> AudioBuffer { AudioBuffer(samples: .float32(samples), channels: 1) }

    @Test func floatToSixteenBitSaturatesAndSilencesNaN() {
        let converted = SampleMath.convert(float(Self.odd), to: .s16)
        #expect(converted.samples == .s16([0, 0, 32_767, -32_767, 0, 32_767, -32_767, 16_384, 32_767]))
    }

    @Test func floatToThirtyTwoBitSaturatesAndSilencesNaN() {
        let converted = SampleMath.convert(float(Self.odd), to: .s32)
        #expect(converted.samples == .s32([0, 0, .max, -.max, 0, .max, -.max, 1_073_741_824, .max]))
    }

    @Test func gainAndRampKeepFloatsInRangeAndNaNSilent() {
        var buffer = float(Self.odd)
        SampleMath.scale(&buffer, by: 0.5)
        #expect(buffer.samples == .float32([0, 0, 1, -1, 0, 1, -1, 0.25, 1]))
        var ramped = float([.nan, .infinity, -.infinity, 1])
        SampleMath.ramp(&ramped, from: 1, to: 1)
        #expect(ramped.samples == .float32([0, 1, -1, 1]))
    }

    @Test func integerGainSaturatesAtEveryFactor() {
        var s16 = AudioBuffer(samples: .s16([.max, .min, 100]), channels: 1)
        SampleMath.scale(&s16, by: .infinity)
        #expect(s16.samples == .s16([.max, .min, .max]))
        var s32 = AudioBuffer(samples: .s32([.max, .min, 0]), channels: 1)
        SampleMath.scale(&s32, by: 1e300)
        #expect(s32.samples == .s32([.max, .min, 0]))
        var nan = AudioBuffer(samples: .s32([5]), channels: 1)
        SampleMath.scale(&nan, by: .nan)
        #expect(nan.samples == .s32([0]))
    }

    @Test(arguments: [(Double.nan, Int16(0)), (.infinity, .max), (-.infinity, .min), (1e20, .max), (-1e20, .min), (12.5, 13), (-12.5, -13)])
    func saturatingConversion(value: Double, expected: Int16) {
        #expect(SampleMath.saturating(value) == expected)
    }
}

@Suite("Samples as they are played and measured", .timeLimit(.minutes(1)))
struct FiniteSampleTests {
    @Test func nanIsSilenceInfinityIsFullScaleAndOversStayForTheGain() {
        var samples: [Float] = [.nan, -.nan, .signalingNaN, .infinity, -.infinity, 2, -3, 0.25, .greatestFiniteMagnitude]
        SampleMath.makeFinite(&samples)
        #expect(samples == [0, 0, 0, 1, -1, 2, -3, 0.25, .greatestFiniteMagnitude])
    }

    @Test func figuresAreAlwaysFinite() {
        #expect(Loudness(integrated: .nan, truePeak: .infinity) == Loudness(integrated: nil, truePeak: 0))
        #expect(Loudness(integrated: -.infinity, truePeak: -.infinity) == Loudness(integrated: nil, truePeak: Loudness.noPeak))
        #expect(Loudness(integrated: -20, truePeak: .nan).gain(toward: -18) == 2)
        #expect(Loudness(integrated: -20, truePeak: .infinity).gain(toward: -18) == -1)
    }
}
