/// A clip's loudness, as EBU R 128 measures it: what a listener hears as "how loud", which
/// peak level does not tell (a recording from a phone, a laptop and a download differ by 10 dB
/// or more at the same peak).
public struct Loudness: Sendable, Equatable, Codable {
    /// Integrated loudness, in LUFS. nil for silence (nothing above the gate's −70 LUFS).
    public var integrated: Double?
    /// The highest true peak (between samples, 4× oversampled), in dBTP.
    public var truePeak: Double

    /// Figures are always finite, so they can be saved, shown and turned into a gain: a
    /// loudness that is not a number counts as silence, and a peak that is not one as full
    /// scale (+∞) or none (−∞, NaN).
    public init(integrated: Double?, truePeak: Double) {
        self.integrated = integrated.flatMap { $0.isFinite ? $0 : nil }
        self.truePeak = truePeak.isFinite ? truePeak : (truePeak > 0 ? 0 : Self.noPeak)
    }

    /// The true peak of digital silence.
    public static let noPeak = -200.0

    /// The highest true peak a normalised clip may have: a little headroom so that a DAC's
    /// reconstruction and a lossy stream (Snapcast) never clip.
    public static let peakCeiling = -1.0

    /// The gain, in dB, that brings this clip to `target` LUFS, less whatever would put its
    /// true peak over `peakCeiling`. 0 for silence.
    public func gain(toward target: Double) -> Double {
        guard let integrated else { return 0 }
        return min(target - integrated, Self.peakCeiling - truePeak)
    }
}

/// Measures clips' loudness from their decoded samples.
public protocol LoudnessMeter: Sendable {
    /// Reads `source` through `decoder` to its end. Blocking work runs on the meter's own
    /// thread. Throws `ClipDecodeError` for a file that does not decode.
    func measure(_ source: ClipSource, decoder: any ClipDecoder) async throws -> Loudness
}
