/// Turns clip files into sample blocks. Decoders know nothing about outputs.
public protocol ClipDecoder: Sendable {
    /// Opens `source` for reading. Throws `ClipDecodeError` for a missing, unreadable,
    /// corrupt or unsupported file.
    func open(_ source: ClipSource) async throws -> any DecodedClip
}

extension ClipDecoder {
    /// The clip's format and length, or the `ClipDecodeError` that makes it unplayable.
    /// Decoders that can read a header without opening for playback replace this.
    public func probe(_ source: ClipSource) async throws -> (format: AudioFormat, duration: Duration) {
        let decoded = try await open(source)
        let found = (decoded.format, decoded.duration)
        await decoded.close()
        return found
    }
}
