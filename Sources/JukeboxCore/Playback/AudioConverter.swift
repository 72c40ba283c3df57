/// Turns an audio file the decoder cannot read (a phone's M4A/AAC or WebM/Opus recording) into
/// FLAC, which it can. The daemon's is ffmpeg, when it is installed.
public protocol AudioConverter: Sendable {
    /// Writes `input` as FLAC to `output`, a path that does not exist yet. Throws a
    /// `ConversionFailure` that says why, for people.
    func convertToFLAC(_ input: String, _ output: String, limits: ConversionLimits) async throws(ConversionFailure)
}

/// Why a conversion failed, in a converter's own words.
public struct ConversionFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// How much a conversion may write: it stops a little past `length` (so that a longer input
/// is seen to be longer, not cut to fit) and at `size` bytes.
public struct ConversionLimits: Sendable, Equatable {
    public var length: Duration
    public var size: Int
    public init(length: Duration, size: Int) {
        self.length = length
        self.size = size
    }
}
