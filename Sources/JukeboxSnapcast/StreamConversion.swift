import JukeboxAudio

/// The stream's own sample work: a fade-in after a rest, and its integer samples as
/// snapserver reads them. (Channels and rate are the conversion stage's.)
enum StreamConversion {
    /// A linear ramp from silence over the first `frames`.
    static func fadeIn(_ samples: inout [Float], channels: Int, frames: Int) {
        let count = min(frames, samples.count / max(channels, 1))
        guard count > 0 else { return }
        for frame in 0..<count {
            let level = Float(frame) / Float(count)
            for channel in 0..<channels { samples[frame * channels + channel] *= level }
        }
    }

    /// Little-endian integers: 16-bit, or 24 or 32 bits in four bytes. Rounded and clipped;
    /// NaN becomes silence.
    static func bytes(_ samples: [Float], bits: Int) -> [UInt8] {
        if bits == 16 {
            var out = [UInt8](repeating: 0, count: samples.count * 2)
            for (index, sample) in samples.enumerated() {
                let value = UInt16(bitPattern: Int16(quantize(sample, scale: 32_767)))
                out[2 * index] = UInt8(truncatingIfNeeded: value)
                out[2 * index + 1] = UInt8(truncatingIfNeeded: value >> 8)
            }
            return out
        }
        let scale: Double = bits == 24 ? 8_388_607 : 2_147_483_647
        var out = [UInt8](repeating: 0, count: samples.count * 4)
        for (index, sample) in samples.enumerated() {
            let value = UInt32(bitPattern: Int32(quantize(sample, scale: scale)))
            out[4 * index] = UInt8(truncatingIfNeeded: value)
            out[4 * index + 1] = UInt8(truncatingIfNeeded: value >> 8)
            out[4 * index + 2] = UInt8(truncatingIfNeeded: value >> 16)
            out[4 * index + 3] = UInt8(truncatingIfNeeded: value >> 24)
        }
        return out
    }

    private static func quantize(_ sample: Float, scale: Double) -> Int64 {
        guard sample.isFinite else { return 0 }
        return Int64((min(max(Double(sample), -1), 1) * scale).rounded(.toNearestOrEven))
    }
}
