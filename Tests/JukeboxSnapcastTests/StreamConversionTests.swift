import JukeboxCore
import Testing
@testable import JukeboxSnapcast

/// The samples a Snapcast stream gets: channels mapped, and integers as snapserver reads them.
@Suite("Stream samples")
struct StreamConversionTests {
    @Test func monoGoesToEveryChannelAndChannelsAverageIntoMono() {
        #expect(StreamConversion.map([0.5, -0.25], from: 1, to: 2) == [0.5, 0.5, -0.25, -0.25])
        #expect(StreamConversion.map([0.5, 0.25, -1, 1], from: 2, to: 1) == [0.375, 0])
        #expect(StreamConversion.map([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], from: 6, to: 2) == [0.1, 0.2])
        #expect(StreamConversion.map([0.1, 0.2], from: 2, to: 2) == [0.1, 0.2])
    }

    @Test func integersAreLittleEndianRoundedAndClipped() {
        #expect(StreamConversion.bytes([1, -1, 0, 2, .nan], bits: 16) == [0xFF, 0x7F, 0x01, 0x80, 0, 0, 0xFF, 0x7F, 0, 0])
        // 24 bits in four bytes, the low three, sign-extended.
        #expect(StreamConversion.bytes([1, -1], bits: 24) == [0xFF, 0xFF, 0x7F, 0x00, 0x01, 0x00, 0x80, 0xFF])
        #expect(StreamConversion.bytes([1, -.infinity], bits: 32) == [0xFF, 0xFF, 0xFF, 0x7F, 0, 0, 0, 0])
    }

    @Test func aFadeInRampsFromSilence() {
        var samples: [Float] = Array(repeating: 1, count: 8)
        StreamConversion.fadeIn(&samples, channels: 2, frames: 2)
        #expect(samples == [0, 0, 0.5, 0.5, 1, 1, 1, 1])
    }

    @Test func integerInputIsReadAsFloat() {
        #expect(StreamConversion.floats(AudioBuffer(samples: .s16([16_384, -32_768]), channels: 1)) == [0.5, -1])
        #expect(StreamConversion.floats(AudioBuffer(samples: .s32([1_073_741_824]), channels: 1)) == [0.5])
    }
}
