/// Converts interleaved float audio from one sample rate to another, keeping state across
/// blocks. Made by the daemon from libsoxr (`JukeboxResample`); the audio layer itself has
/// no C library.
public protocol RateConverter: AnyObject {
    /// Converts `samples` (whole frames); returns what is ready, which lags the input by the
    /// filter's delay until `flush()`.
    func process(_ samples: [Float]) -> [Float]
    /// What the filter still holds, at the end of a clip; the converter can then take a new one.
    func flush() -> [Float]
}

/// Makes a rate converter for `from` Hz to `to` Hz with `channels`; throws, with the reason
/// in words, when it cannot.
public typealias RateConverterFactory = @Sendable (_ from: Int, _ to: Int, _ channels: Int) throws -> any RateConverter
