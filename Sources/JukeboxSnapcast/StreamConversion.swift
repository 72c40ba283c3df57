import JukeboxAudio

/// Sample work for a fixed-format stream: to float, channel mapping, a fade-in, and to the
/// stream's integer samples.
enum StreamConversion {
    static func floats(_ buffer: AudioBuffer) -> [Float] {
        switch buffer.samples {
        case .float32(let samples): samples
        case .s16(let samples): samples.map { Float($0) / 32_768 }
        case .s32(let samples): samples.map { Float($0) / 2_147_483_648 }
        }
    }

    /// Mono is copied to every channel and every channel is averaged into mono; otherwise
    /// channel N goes to channel N, and an output channel with no input repeats the inputs.
    static func map(_ samples: [Float], from inputs: Int, to outputs: Int) -> [Float] {
        guard inputs != outputs, inputs > 0 else { return samples }
        let frames = samples.count / inputs
        var mapped = [Float](repeating: 0, count: frames * outputs)
        if outputs == 1 {
            let scale = 1 / Float(inputs)
            for frame in 0..<frames {
                var sum: Float = 0
                for channel in 0..<inputs { sum += samples[frame * inputs + channel] }
                mapped[frame] = sum * scale
            }
            return mapped
        }
        for frame in 0..<frames {
            for channel in 0..<outputs { mapped[frame * outputs + channel] = samples[frame * inputs + channel % inputs] }
        }
        return mapped
    }

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
