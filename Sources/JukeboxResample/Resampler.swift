import CSoxr
import JukeboxAudio

/// Converts interleaved float audio from one sample rate to another with libsoxr (its "high
/// quality" setting, as snapclient and MPD use it). This is the only file that imports soxr.
///
/// Not thread-safe: one owner (an output's own thread) feeds it in order.
public final class Resampler: RateConverter, @unchecked Sendable {
    public let inputRate: Int
    public let outputRate: Int
    public let channels: Int
    private let soxr: soxr_t
    /// What soxr writes into, made once: the output of one call, `chunkFrames` at a time.
    private var chunk: [Float]
    private static let chunkFrames = 4096

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public init(inputRate: Int, outputRate: Int, channels: Int) throws(Failure) {
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        var error: soxr_error_t?
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
        let made = soxr_create(Double(inputRate), Double(outputRate), UInt32(channels), &error, &io, &quality, nil)
        guard let made, error == nil else {
            throw Failure(description: "cannot convert \(inputRate) Hz to \(outputRate) Hz: \(error.map { String(cString: $0) } ?? "libsoxr failed")")
        }
        soxr = made
        chunk = [Float](repeating: 0, count: Self.chunkFrames * channels)
    }

    deinit { soxr_delete(soxr) }

    /// Converts `samples` (whole frames); returns what is ready, which lags the input by the
    /// filter's delay until `flush()`.
    public func process(_ samples: [Float]) -> [Float] {
        run(samples, final: false)
    }

    /// The rest: what the filter still holds, at the end of a clip. The resampler can then
    /// take a new clip.
    public func flush() -> [Float] {
        let tail = run([], final: true)
        soxr_clear(soxr)
        return tail
    }

    private func run(_ samples: [Float], final: Bool) -> [Float] {
        let inputFrames = samples.count / channels
        var output: [Float] = []
        output.reserveCapacity((inputFrames * outputRate / max(inputRate, 1) + 64) * channels)
        var consumed = 0
        while true {
            var taken = 0, made = 0
            let error: soxr_error_t? = samples.withUnsafeBufferPointer { input in
                chunk.withUnsafeMutableBufferPointer { out in
                    let remaining = inputFrames - consumed
                    // A null input asks soxr for what it still holds (the end of the stream).
                    let source = final ? nil : UnsafeRawPointer(input.baseAddress.map { $0 + consumed * channels })
                    return soxr_process(soxr, source, final ? 0 : remaining, &taken, out.baseAddress, Self.chunkFrames, &made)
                }
            }
            if error != nil { break }
            consumed += taken
            output.append(contentsOf: chunk[0..<(made * channels)])
            if final ? made == 0 : (consumed >= inputFrames && made < Self.chunkFrames) { break }
        }
        return output
    }
}
