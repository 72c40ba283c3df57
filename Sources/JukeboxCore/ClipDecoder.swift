/// Turns clip files into sample blocks. Decoders know nothing about outputs.
public protocol ClipDecoder: Sendable {
    /// Opens `source` for reading. Throws `ClipDecodeError` for a missing, unreadable,
    /// corrupt or unsupported file.
    func open(_ source: ClipSource) async throws -> any DecodedClip
}

/// One open clip file.
public protocol DecodedClip: Sendable {
    var format: AudioFormat { get }
    var frameCount: Int { get }

    /// Up to `maxFrames` frames, or nil at the end. Throws `ClipDecodeError`.
    func read(maxFrames: Int) async throws -> AudioBuffer?

    /// Moves the read position to `frame` (used to resume after a pause).
    func seek(toFrame frame: Int) async throws

    func close() async
}

extension DecodedClip {
    public var duration: Duration { format.duration(frames: frameCount) }
}

/// A clip that cannot be played: names the file and says why.
public struct ClipDecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var reason: String

    public init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }

    public var description: String { "\(file): \(reason)" }
}
