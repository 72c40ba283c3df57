#if canImport(Glibc)
import Glibc
#endif

/// Finds test clips in a capture of what a sound card played: each test clip is a sine tone
/// of its own frequency, so 10 ms windows can be labelled with the tone they hold (or none)
/// and a clip's start and end read off the capture's timeline.
public struct CaptureAnalysis: Sendable {
    public static let rate = 44_100
    /// 10 ms, the resolution of every figure the analysis gives.
    public static let window = 441

    public struct Segment: Sendable, Equatable, CustomStringConvertible {
        public var frequency: Double
        /// In windows from the start of the capture; `end` is exclusive.
        public var start: Int
        public var end: Int
        public var windows: Int { end - start }
        /// Windows are 10 ms at every rate.
        public var seconds: Double { Double(windows) / 100 }
        public init(frequency: Double, start: Int, end: Int) {
            self.frequency = frequency
            self.start = start
            self.end = end
        }

        public var description: String { "\(Int(frequency)) Hz @ \(start)..<\(end)" }
    }

    /// Per window: the known tone it holds, or nil for silence (or sound that is no known tone).
    public let labels: [Double?]
    /// Windows in which a second known tone is nearly as strong as the first.
    public let twoToneWindows: [Int]
    /// Per window: any sound louder than −40 dBFS (a tone or not, such as speech).
    public let sound: [Bool]

    /// `bytes` is raw s16le stereo at `rate` (44.1 kHz, the rig's); the left channel is analysed
    /// in 10 ms windows.
    public init(bytes: [UInt8], frequencies: [Double], rate: Int = CaptureAnalysis.rate) {
        let window = rate / 100
        let frames = bytes.count / 4
        var left = [Double](repeating: 0, count: frames)
        for frame in 0..<frames {
            left[frame] = Double(Int16(bitPattern: UInt16(bytes[4 * frame]) | UInt16(bytes[4 * frame + 1]) << 8)) / 32_768
        }
        var labels: [Double?] = []
        var twoTone: [Int] = []
        var sound: [Bool] = []
        for index in 0..<(frames / window) {
            let samples = left[(index * window)..<((index + 1) * window)]
            sound.append(samples.reduce(0) { $0 + $1 * $1 } / Double(samples.count) > 1e-4)
            let amplitudes = frequencies.map { Self.amplitude(of: $0, in: samples, rate: rate) }.enumerated().sorted { $0.element > $1.element }
            if amplitudes.count > 1, amplitudes[1].element > 0.02, amplitudes[1].element > amplitudes[0].element * 0.5 {
                twoTone.append(index)
            }
            let meanSquare = samples.reduce(0) { $0 + $1 * $1 } / Double(samples.count)
            // A tone window carries nearly all its energy at one known frequency; a click or a
            // stray sound spreads it, and is not taken for a clip.
            // (A window where one clip ends and the next begins holds two known tones.)
            let toneEnergy = amplitudes.prefix(2).reduce(0) { $0 + $1.element * $1.element / 2 }
            guard let best = amplitudes.first, best.element > 0.02, toneEnergy > 0.5 * meanSquare else {
                labels.append(nil)
                continue
            }
            labels.append(frequencies[best.offset])
        }
        self.labels = labels
        self.twoToneWindows = twoTone
        self.sound = sound
    }

    /// Runs of windows holding the same tone, in order.
    public var segments: [Segment] {
        var result: [Segment] = []
        for (index, label) in labels.enumerated() {
            guard let label else { continue }
            if var last = result.last, last.frequency == label, last.end == index {
                last.end = index + 1
                result[result.count - 1] = last
            } else {
                result.append(Segment(frequency: label, start: index, end: index + 1))
            }
        }
        return result
    }

    /// Silent windows between the end of one segment and the start of the next.
    public static func gaps(_ segments: [Segment]) -> [Int] {
        zip(segments, segments.dropFirst()).map { $1.start - $0.end }
    }

    /// The tone's amplitude (0...1) in `samples`, by the Goertzel algorithm.
    /// The amplitude of `frequency` in the left channel of raw s16le stereo `bytes`, in windows
    /// of `frames` (50 ms by default: fine enough to tell tones 100 Hz apart), in order.
    public static func amplitudes(bytes: [UInt8], frequency: Double, frames: Int = 2205, rate: Int = CaptureAnalysis.rate) -> [Double] {
        let count = bytes.count / 4
        var left = [Double](repeating: 0, count: count)
        for frame in 0..<count {
            left[frame] = Double(Int16(bitPattern: UInt16(bytes[4 * frame]) | UInt16(bytes[4 * frame + 1]) << 8)) / 32_768
        }
        return (0..<(count / frames)).map { amplitude(of: frequency, in: left[($0 * frames)..<(($0 + 1) * frames)], rate: rate) }
    }

    static func amplitude(of frequency: Double, in samples: ArraySlice<Double>, rate: Int) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(rate))
        var previous = 0.0, beforePrevious = 0.0
        for sample in samples {
            let current = sample + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return 2 * max(power, 0).squareRoot() / Double(samples.count)
    }
}
