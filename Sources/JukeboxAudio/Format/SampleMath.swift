#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Gain, volume and format conversion in software. Integer results saturate at the format's
/// limits instead of wrapping, so a loud clip with positive gain clips rather than cracks.
/// Every float-to-integer step goes through `saturating`: a float file may hold NaN or ±Inf
/// (a broken encoder, a corrupt file), and a plain `Int32(_:)` of those traps, which would
/// take the daemon down on every restart while the clip heads the queue.
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
            for i in samples.indices { samples[i] = saturating(Double(Float(samples[i]) * gain)) }
            buffer.samples = .s16(samples)
        case .s32(var samples):
            for i in samples.indices { samples[i] = saturating(Double(samples[i]) * factor) }
            buffer.samples = .s32(samples)
        case .float32(var samples):
            for i in samples.indices { samples[i] = clampedUnit(samples[i] * gain) }
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
            for i in samples.indices { samples[i] = saturating(Double(samples[i]) * gain(i)) }
            buffer.samples = .s16(samples)
        case .s32(var samples):
            for i in samples.indices { samples[i] = saturating(Double(samples[i]) * gain(i)) }
            buffer.samples = .s32(samples)
        case .float32(var samples):
            for i in samples.indices { samples[i] = clampedUnit(Float(Double(samples[i]) * gain(i))) }
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
            result.samples = .s16(samples.map { saturating(Double(clampedUnit($0)) * 32_767) })
        case (.float32(let samples), .s32):
            result.samples = .s32(samples.map { saturating(Double(clampedUnit($0)) * 2_147_483_647) })
        default: break
        }
        return result
    }

    /// The samples as floats in -1...1 (integers divided by their full scale).
    public static func floats(_ buffer: AudioBuffer) -> [Float] {
        switch buffer.samples {
        case .float32(let samples): samples
        case .s16(let samples): samples.map { Float($0) / 32_768 }
        case .s32(let samples): samples.map { Float($0) / 2_147_483_648 }
        }
    }

    /// Mono is copied to every channel and every channel is averaged into mono; otherwise
    /// channel N goes to channel N, and an output channel with no input repeats the inputs.
    public static func mapChannels(_ samples: [Float], from inputs: Int, to outputs: Int) -> [Float] {
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

    /// `value` rounded to the nearest integer of type `I`, saturating at its limits; NaN is 0.
    @inline(__always)
    public static func saturating<I: FixedWidthInteger>(_ value: Double) -> I {
        guard !value.isNaN else { return 0 }
        let rounded = value.rounded()
        if rounded >= Double(I.max) { return I.max }
        if rounded <= Double(I.min) { return I.min }
        return I(rounded)
    }

    /// Float samples as they are played and measured: NaN as silence, ±Inf as full scale (±1),
    /// and every finite sample, overs included, as it is (a gain below 0 dB may still bring an
    /// over back). The decoder applies this to every block it reads, so the player at any gain,
    /// the loudness meter and Snapcast all take the same samples.
    public static func makeFinite(_ samples: inout [Float]) {
        for i in samples.indices where !samples[i].isFinite {
            samples[i] = samples[i].isNaN ? 0 : (samples[i] > 0 ? 1 : -1)
        }
    }

    /// A float sample held to -1...1, with NaN as silence and ±Inf at full scale.
    @inline(__always)
    static func clampedUnit(_ value: Float) -> Float {
        value.isNaN ? 0 : min(max(value, -1), 1)
    }
}
