#if canImport(Glibc)
import Glibc
#endif

/// Keeps the mix of music and clip under `ceiling` true peak, as ITU-R BS.1770 measures it:
/// peaks between samples included, which is where a digital-to-analogue converter's output
/// overshoots the samples. The clips' loudness gain already stops at −1 dBTP; this is the
/// same ceiling for what the two make together.
///
/// - **Measuring.** Each stretch between two samples is looked at in 8 points, interpolated by
///   a Kaiser-windowed sinc of 32 taps a point, cut at 0.97 of Nyquist (as libswresample,
///   which ffmpeg's true-peak meter resamples with). That needs 16 frames after the stretch.
/// - **Gain.** Each frame's needed gain (the ceiling less `margin`, over its true peak) goes
///   through a sliding minimum and then a moving average, both `lookAhead` long: the gain is
///   down, smoothly, by the time the peak is played. It comes back up over `release`.
/// - **Delay.** The output is the input `delayFrames` later (the 16 frames, plus the
///   look-ahead): 2.4 ms at 44.1 kHz. No sample is clipped.
///
/// A block whose samples, and those before it, could not reach the ceiling however they are
/// interpolated is only delayed: music well under the ceiling costs a copy.
struct MixLimiter {
    let channels: Int
    let ceiling: Float
    /// What the gain aims under: the ceiling less `margin`, so a meter that interpolates
    /// another way still reads under the ceiling.
    private let target: Float
    /// How far the gain may rise per frame (from the reduction back to 1 over `release`).
    private let releaseStep: Float
    private let lookAhead: Int
    /// The input frames not yet output, interleaved: `Self.tapsBefore` frames of history
    /// before the first frame not yet measured, then the rest.
    private var input: [Float]
    /// Frames measured and not yet output (the look-ahead), interleaved, as a ring.
    private var measured: [Float]
    private var measuredAt = 0
    /// The needed gains of the frame going out and of the `lookAhead` frames after it, as a ring.
    private var needed: [Float]
    private var neededAt = 0
    /// The sliding minimums of the last `lookAhead` frames, as a ring, and their sum.
    private var minimums: [Float]
    private var minimumAt = 0
    private var minimumSum: Float
    /// The gain last applied.
    private var gain: Float = 1
    /// Frames since a needed gain under 1 entered the look-ahead: past two look-aheads every
    /// gain in the pipeline is 1 again.
    private var sinceReduction = Int.max / 2
    /// Room for the measuring pass, kept between blocks: one channel's samples, and each
    /// frame's true peak.
    private var plane: [Float] = []
    private var peaks: [Float] = []

    /// −1 dBTP, as the loudness gain.
    static let defaultCeiling: Float = 0.891_250_938
    /// How far under the ceiling the gain aims: BS.1770's own 4× filter and ffmpeg's read
    /// white noise up to 1 dB apart; 8× with 32 taps reads within 0.3 dB of either.
    static let margin: Float = 0.944_060_876  // −0.5 dB
    /// Points measured between two samples, and taps a point on each side.
    static let oversampling = 8
    static let tapsBefore = 15
    static let tapsAfter = 16
    /// The interpolation filter: for each point `p` of 1...7 between frame `i` and `i + 1`,
    /// the weights of frames `i - 15` … `i + 16`; point 0 is the sample itself.
    static let phases: [[Float]] = (1..<oversampling).map { point in
        let fraction = Double(point) / Double(oversampling)
        let cutoff = 0.97, beta = 8.0, half = Double(tapsAfter)
        var weights = (-tapsBefore...tapsAfter).map { offset -> Double in
            let u = fraction - Double(offset)
            let x = Double.pi * cutoff * u
            let sinc = abs(x) < 1e-12 ? 1 : sin(x) / x
            let edge = u / half
            let window = abs(edge) >= 1 ? 0 : besselI0(beta * (1 - edge * edge).squareRoot()) / besselI0(beta)
            return cutoff * sinc * window
        }
        let sum = weights.reduce(0, +)
        weights = weights.map { $0 / sum }
        return weights.map(Float.init)
    }
    /// The weights of every point, one after another, for the measuring loop.
    private static let weights: [Float] = phases.flatMap { $0 }

    /// The true peaks of `count` frames, over every channel, into `peaks` (one a frame): each
    /// frame's own samples and the points after it up to the next frame. `input` is
    /// interleaved and starts `tapsBefore` frames before the first frame measured; it holds
    /// `tapsAfter` frames after the last. The hot loop of the limiter (7 × 32 multiply-adds a
    /// sample): each channel is copied out on its own (`plane`), then eight frames are measured
    /// at once, every point's sum kept in a vector, each sample loaded once for all seven points.
    /// The sums are taken in the same order as one frame at a time would take them.
    static func truePeaks(_ input: [Float], channels: Int, count: Int, into peaks: inout [Float], plane: inout [Float]) {
        typealias Lanes = SIMD8<Float>
        // One sum for each point between two samples: seven.
        assert(oversampling == 8)
        let width = Lanes.scalarCount
        let taps = tapsBefore + tapsAfter + 1
        let groups = (count + width - 1) / width
        // Room to load a whole last group past the frames there are (zeros, never used).
        let planeFrames = groups * width + taps
        if plane.count < planeFrames { plane = [Float](repeating: 0, count: planeFrames) }
        if peaks.count < groups * width { peaks = [Float](repeating: 0, count: groups * width) }
        let inputFrames = input.count / channels
        peaks.withUnsafeMutableBufferPointer { peaks in
            for frame in 0..<(groups * width) { peaks[frame] = 0 }
            for channel in 0..<channels {
                plane.withUnsafeMutableBufferPointer { plane in
                    input.withUnsafeBufferPointer { input in
                        for frame in 0..<inputFrames { plane[frame] = input[frame * channels + channel] }
                        for frame in inputFrames..<plane.count { plane[frame] = 0 }
                    }
                }
                plane.withUnsafeBufferPointer { plane in
                    weights.withUnsafeBufferPointer { weights in
                        guard let samples = plane.baseAddress, let weights = weights.baseAddress else { return }
                        let raw = UnsafeRawPointer(samples)
                        let stride = MemoryLayout<Float>.stride
                        for group in 0..<groups {
                            let first = group * width
                            // Frame f's taps are plane[f] … plane[f + 31]; its own sample is plane[f + 15].
                            var peak = magnitude(raw.loadUnaligned(fromByteOffset: (first + tapsBefore) * stride, as: Lanes.self))
                            var sums = (Lanes(), Lanes(), Lanes(), Lanes(), Lanes(), Lanes(), Lanes())
                            for tap in 0..<taps {
                                let x = raw.loadUnaligned(fromByteOffset: (first + tap) * stride, as: Lanes.self)
                                sums.0 += x * weights[tap]
                                sums.1 += x * weights[taps + tap]
                                sums.2 += x * weights[2 * taps + tap]
                                sums.3 += x * weights[3 * taps + tap]
                                sums.4 += x * weights[4 * taps + tap]
                                sums.5 += x * weights[5 * taps + tap]
                                sums.6 += x * weights[6 * taps + tap]
                            }
                            peak = larger(peak, larger(larger(magnitude(sums.0), magnitude(sums.1)), larger(magnitude(sums.2), magnitude(sums.3))))
                            peak = larger(peak, larger(larger(magnitude(sums.4), magnitude(sums.5)), magnitude(sums.6)))
                            for lane in 0..<width { peaks[first + lane] = max(peaks[first + lane], peak[lane]) }
                        }
                    }
                }
            }
        }
    }

    // The lane-wise largest and magnitude, as one select each (the standard library's
    // `pointwiseMax` is not inlined here, and costs more than the sums).
    @inline(__always)
    private static func larger(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> {
        a.replacing(with: b, where: a .< b)
    }

    @inline(__always)
    private static func magnitude(_ lanes: SIMD8<Float>) -> SIMD8<Float> {
        larger(lanes, -lanes)
    }

    /// The most any point can be over the largest sample it is made from.
    private static let worstGain: Float = phases.map { $0.reduce(0) { $0 + abs($1) } }.max() ?? 2

    /// The modified Bessel function of the first kind, order 0 (for the Kaiser window).
    private static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        while term > 1e-12 * sum {
            term *= (x / (2 * k)) * (x / (2 * k))
            sum += term
            k += 1
        }
        return sum
    }

    /// How much later a sample comes out than it went in.
    var delayFrames: Int { Self.tapsAfter + lookAhead }

    init(channels: Int, sampleRate: Int, ceiling: Float = defaultCeiling, lookAhead: Double = 0.002, release: Double = 0.1) {
        self.channels = max(channels, 1)
        self.ceiling = ceiling
        target = ceiling * Self.margin
        self.lookAhead = max(Int((Double(sampleRate) * lookAhead).rounded()), 1)
        releaseStep = 1 / Float(max(Int(Double(sampleRate) * release), 1))
        // Silence before the first sample: the history the filter reads, and the delay.
        input = [Float](repeating: 0, count: (Self.tapsBefore + Self.tapsAfter) * self.channels)
        measured = [Float](repeating: 0, count: self.lookAhead * self.channels)
        needed = [Float](repeating: 1, count: self.lookAhead + 1)
        minimums = [Float](repeating: 1, count: self.lookAhead)
        minimumSum = Float(self.lookAhead)
    }

    /// Limits `samples` (interleaved frames) in place: they come out `delayFrames` later, the
    /// frames before them taking their place. Returns the lowest gain it applied.
    @discardableResult
    mutating func apply(_ samples: inout [Float]) -> Float {
        let frames = samples.count / channels
        guard frames > 0 else { return 1 }
        input.append(contentsOf: samples[..<(frames * channels)])
        // Could any point of these frames, or of those before them still to be measured,
        // reach the target? If not, their needed gains are all 1.
        var largest: Float = 0
        for sample in input { largest = max(largest, abs(sample)) }
        let quiet = largest * Self.worstGain < target
        if !quiet { Self.truePeaks(input, channels: channels, count: frames, into: &peaks, plane: &plane) }
        var lowest: Float = 1
        var out = 0
        for frame in 0..<frames {
            // Frame `frame` of the block is measured now: its stretch to the next needs the
            // 16 frames after it, which `input` holds (the block came in 16 frames behind).
            let base = (Self.tapsBefore + frame) * channels
            var need: Float = 1
            if !quiet, peaks[frame] > target { need = target / peaks[frame] }
            // The frame joins the look-ahead; the one measured `lookAhead` frames ago gets
            // its gain and goes out. Every minimum averaged here covers that frame's need,
            // so the gain it goes out at is no more than it needs.
            needed[neededAt] = need
            neededAt = (neededAt + 1) % needed.count
            sinceReduction = need < 1 ? 0 : sinceReduction + 1
            var current: Float
            if sinceReduction > 2 * lookAhead, gain >= 1 {
                // Every need in the pipeline has been 1 for two look-aheads, and so has every
                // minimum: the sum is set exactly, so no rounding builds up over months.
                current = 1
                minimumSum = Float(lookAhead)
            } else {
                var minimum: Float = 1
                for value in needed { minimum = min(minimum, value) }
                minimumSum += minimum - minimums[minimumAt]
                minimums[minimumAt] = minimum
                minimumAt = (minimumAt + 1) % lookAhead
                current = min(minimumSum / Float(lookAhead), gain + releaseStep, 1)
            }
            gain = current
            lowest = min(lowest, current)
            let slot = measuredAt * channels
            for channel in 0..<channels {
                samples[out + channel] = measured[slot + channel] * current
                measured[slot + channel] = input[base + channel]
            }
            measuredAt = (measuredAt + 1) % lookAhead
            out += channels
        }
        input.removeFirst(frames * channels)
        return lowest
    }
}
