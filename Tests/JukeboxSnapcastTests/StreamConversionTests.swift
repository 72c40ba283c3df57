import JukeboxCore
import Testing
@testable import JukeboxSnapcast

/// The samples a Snapcast stream gets: integers as snapserver reads them, and a fade-in after a rest.
@Suite("Stream samples")
struct StreamConversionTests {
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

}
