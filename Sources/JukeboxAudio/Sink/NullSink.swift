import Synchronization

/// An output that plays nothing: it accepts every frame at once and counts them. For tests
/// of the front ends and for measuring everything above the device; a clip "plays" as fast
/// as it decodes.
public final class NullSink: AudioSink {
    public let deviceName: String
    private let frames = Atomic<Int>(0)

    public init(deviceName: String = "null") { self.deviceName = deviceName }

    /// Frames written since the output was made.
    public var framesWritten: Int { frames.load(ordering: .relaxed) }
    public var underruns: Int { 0 }

    public func open(_ format: AudioFormat) async throws -> AudioFormat { format }
    public func write(_ buffer: AudioBuffer) async throws { frames.add(buffer.frames, ordering: .relaxed) }
    /// Writes never wait for room, so there is no wait to cut short.
    public func interrupt() {}
    public func drain() async throws {}
    /// Nothing is ever held back unplayed.
    public func cancel() async -> Int { 0 }
    public func rewind(upTo maxFrames: Int, keeping: Int) async -> Int { 0 }
    public func close() async {}
}
