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
