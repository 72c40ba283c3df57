/// A fixed PCM stream format, written as Snapcast writes it: `RATE:BITS:CHANNELS`, such as
/// `48000:16:2`. 24-bit samples take four bytes each, in the low three (as snapserver reads them).
public struct StreamFormat: Sendable, Hashable, CustomStringConvertible {
    public var sampleRate: Int
    public var bits: Int
    public var channels: Int

    public static let snapcastDefault = StreamFormat(sampleRate: 48_000, bits: 16, channels: 2)
    public static let rateRange = 8_000...384_000
    public static let bitDepths = [16, 24, 32]
    public static let channelRange = 1...8

    public init(sampleRate: Int, bits: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.bits = bits
        self.channels = channels
    }

    /// Parses `RATE:BITS:CHANNELS`; nil with the reason in words when it is not one.
    public static func parse(_ text: String) -> Result<StreamFormat, Problem> {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let rate = Int(parts[0]), let bits = Int(parts[1]), let channels = Int(parts[2]) else {
            return .failure(Problem("is not RATE:BITS:CHANNELS, such as \"48000:16:2\""))
        }
        guard rateRange.contains(rate) else { return .failure(Problem("has a rate of \(rate) Hz (from \(rateRange.lowerBound) to \(rateRange.upperBound))")) }
        guard bitDepths.contains(bits) else { return .failure(Problem("has \(bits) bits (16, 24 or 32)")) }
        guard channelRange.contains(channels) else { return .failure(Problem("has \(channels) channels (1 to 8)")) }
        return .success(StreamFormat(sampleRate: rate, bits: bits, channels: channels))
    }

    public struct Problem: Error, Equatable {
        public var text: String
        init(_ text: String) { self.text = text }
    }

    public var bytesPerSample: Int { bits == 16 ? 2 : 4 }
    public var bytesPerFrame: Int { bytesPerSample * channels }
    public var description: String { "\(sampleRate):\(bits):\(channels)" }
}
