/// Turns an audio file the decoder cannot read (a phone's M4A/AAC or WebM/Opus recording) into
/// FLAC, which it can. The daemon's is ffmpeg, when it is installed.
public protocol AudioConverter: Sendable {
    /// Writes `input` as FLAC to `output`, a path that does not exist yet, stopping a little
    /// past `limits.length` (so that a longer input is seen to be longer, not cut to fit) and
    /// at `limits.size` bytes. Throws a `ConversionFailure` that says why, for people.
    func convertToFLAC(_ input: String, _ output: String, limits: UploadLimits) async throws(ConversionFailure)
}

/// Why a conversion failed, in a converter's own words.
public struct ConversionFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
