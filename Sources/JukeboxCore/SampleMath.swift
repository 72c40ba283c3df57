#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Gain, volume and format conversion in software. Integer results saturate at the format's
/// limits instead of wrapping, so a loud clip with positive gain clips rather than cracks.
public enum SampleMath {
    public static func linearGain(decibels: Double) -> Double {
        decibels == 0 ? 1 : pow(10, decibels / 20)
    }

    /// Scales `buffer` in place. A factor of exactly 1 leaves it untouched (bit-exact output).
    public static func scale(_ buffer: inout AudioBuffer, by factor: Double) {
        guard factor != 1 else { return }
        let gain = Float(factor)
        switch buffer.samples {
        case .s16(var samples):
            for i in samples.indices { samples[i] = Int16(clamping: Int32((Float(samples[i]) * gain).rounded())) }
            buffer.samples = .s16(samples)
        case .s32(var samples):
            let scaled = Double(factor)
            for i in samples.indices {
                samples[i] = Int32(clamping: Int64(clampedDouble((Double(samples[i]) * scaled).rounded(), Int32.self)))
            }
            buffer.samples = .s32(samples)
        case .float32(var samples):
            for i in samples.indices { samples[i] = min(max(samples[i] * gain, -1), 1) }
            buffer.samples = .float32(samples)
        }
    }

    /// Multiplies frame `i` of `buffer` by a gain that moves in a straight line from `start`
    /// (first frame) towards `end` (reached just after the last frame): a fade-in or fade-out
    /// that is smooth across the block and meets the neighbouring audio without a step.
    public static func ramp(_ buffer: inout AudioBuffer, from start: Double, to end: Double) {
        let frames = buffer.frames, channels = buffer.channels
        guard frames > 0 else { return }
        func gain(_ index: Int) -> Double { start + (end - start) * Double(index / channels) / Double(frames) }
        switch buffer.samples {
        case .s16(var samples):
            for i in samples.indices { samples[i] = Int16(clamping: Int32((Double(samples[i]) * gain(i)).rounded())) }
            buffer.samples = .s16(samples)
        case .s32(var samples):
            for i in samples.indices {
                samples[i] = Int32(clamping: Int64(clampedDouble((Double(samples[i]) * gain(i)).rounded(), Int32.self)))
            }
            buffer.samples = .s32(samples)
        case .float32(var samples):
            for i in samples.indices { samples[i] = Float(Double(samples[i]) * gain(i)) }
            buffer.samples = .float32(samples)
        }
    }

    /// Converts `buffer` to `format`, for devices that refuse the decoder's native format.
    public static func convert(_ buffer: AudioBuffer, to format: SampleFormat) -> AudioBuffer {
        guard buffer.samples.format != format else { return buffer }
        var result = buffer
        switch (buffer.samples, format) {
        case (.s16(let samples), .s32): result.samples = .s32(samples.map { Int32($0) << 16 })
        case (.s16(let samples), .float32): result.samples = .float32(samples.map { Float($0) / 32_768 })
        case (.s32(let samples), .s16): result.samples = .s16(samples.map { Int16(truncatingIfNeeded: $0 >> 16) })
        case (.s32(let samples), .float32): result.samples = .float32(samples.map { Float(Double($0) / 2_147_483_648) })
        case (.float32(let samples), .s16):
            result.samples = .s16(samples.map { Int16(clamping: Int32((min(max($0, -1), 1) * 32_767).rounded())) })
        case (.float32(let samples), .s32):
            result.samples = .s32(samples.map { Int32(clamping: Int64((Double(min(max($0, -1), 1)) * 2_147_483_647).rounded())) })
        default: break
        }
        return result
    }

    private static func clampedDouble(_ value: Double, _: Int32.Type) -> Double {
        min(max(value, Double(Int32.min)), Double(Int32.max))
    }
}
