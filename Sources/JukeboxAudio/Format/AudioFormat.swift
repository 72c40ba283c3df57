/// What a sink must be opened with. Consecutive clips with equal formats share one open
/// device, which is what makes them gapless.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    public var sampleFormat: SampleFormat
    public var sampleRate: Int
    public var channels: Int

    public init(sampleFormat: SampleFormat, sampleRate: Int, channels: Int) {
        self.sampleFormat = sampleFormat
        self.sampleRate = sampleRate
        self.channels = channels
    }

    public var bytesPerFrame: Int { sampleFormat.bytesPerSample * channels }

    public func duration(frames: Int) -> Duration {
        .milliseconds(Int64(frames) * 1000 / Int64(max(sampleRate, 1)))
    }

    /// Whole frames in `duration` at this rate (rounded down).
    public func frames(in duration: Duration) -> Int {
        Int(duration.milliseconds * Int64(sampleRate) / 1000)
    }

    /// No block, fade or stretch of silence holds more samples than this (4 MB of floats), so
    /// a file that claims an absurd rate or channel count cannot make one read allocate
    /// gigabytes. Ordinary clips never reach it: 500 ms of 48 kHz stereo is 48 000 samples.
    public static let maxBlockSamples = 1 << 20

    /// The most frames of this format one block may hold: every decoder read and every
    /// block the player writes stays within it.
    public var maxBlockFrames: Int { max(Self.maxBlockSamples / max(channels, 1), 1) }

    public var description: String { "\(sampleFormat) \(sampleRate) Hz \(channels) ch" }
}
