/// What an upload may hold: a clip jukebox plays reminders and chimes, not hours of
/// multichannel studio audio, and checking an upload decodes all of it, so these bound that
/// work whatever the file claims.
public struct UploadLimits: Sendable, Equatable {
    /// The session's `maxUploadLength`.
    public var length: Duration
    /// The session's `maxUploadSize`, in bytes.
    public var size: Int

    /// More than any speaker or DAC a Pi drives plays.
    public static let maxSampleRate = 192_000
    /// 7.1 is the most a clip may have.
    public static let maxChannels = 8

    public init(length: Duration, size: Int) {
        self.length = length
        self.size = size
    }

    init(_ session: Session) {
        self.init(length: session.maxUploadLength, size: session.maxUploadSize)
    }

    /// Why a file of `format` with `frames` frames is refused, or nil.
    func refusal(of format: AudioFormat, frames: Int, name: String) -> String? {
        if format.sampleRate > Self.maxSampleRate || format.sampleRate < 1 {
            return "\(name) is sampled at \(format.sampleRate) Hz; at most \(Self.maxSampleRate) Hz is accepted (convert it to 48000 Hz)"
        }
        if format.channels > Self.maxChannels || format.channels < 1 {
            return "\(name) has \(format.channels) channels; at most \(Self.maxChannels) are accepted (mix it down to stereo or mono)"
        }
        // At most 3 h at 192 kHz by now: no overflow.
        if frames > format.frames(in: length) {
            return "\(name) is longer than the \(DurationText.format(length)) accepted (the session's maxUploadLength; raise it to add a longer clip)"
        }
        return nil
    }
}
