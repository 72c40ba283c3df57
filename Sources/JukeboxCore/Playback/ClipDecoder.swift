/// Turns clip files into sample blocks. Decoders know nothing about outputs.
public protocol ClipDecoder: Sendable {
    /// Opens `source` for reading. Throws `ClipDecodeError` for a missing, unreadable,
    /// corrupt or unsupported file.
    func open(_ source: ClipSource) async throws -> any DecodedClip
}
