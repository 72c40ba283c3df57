import JukeboxCore

/// Serves made-up clips keyed by path. Every sample of a clip equals its tag, so the sink can
/// tell clips apart; a clip can also be made to fail on open.
public struct FakeDecoder: ClipDecoder {
    public struct Spec: Sendable {
        public var tag: Int
        public var frames: Int
        public var format = AudioFormat(sampleFormat: .s16, sampleRate: 1000, channels: 1)
        public var failure: String?
        /// When set, sample n of the clip is `tag + n` instead of `tag`, so a test can see
        /// exactly which frames were written (the write's tag is then its first frame).
        public var counting = false

        public init(
            tag: Int, frames: Int, format: AudioFormat = AudioFormat(sampleFormat: .s16, sampleRate: 1000, channels: 1), failure: String? = nil,
            counting: Bool = false
        ) {
            self.tag = tag
            self.frames = frames
            self.format = format
            self.failure = failure
            self.counting = counting
        }
    }

    public var clips: [String: Spec]

    public init(clips: [String: Spec]) { self.clips = clips }

    public func open(_ source: ClipSource) async throws -> any DecodedClip {
        guard let spec = clips[source.path] else { throw ClipDecodeError(file: source.file, reason: "no such file") }
        if let failure = spec.failure { throw ClipDecodeError(file: source.file, reason: failure) }
        return FakeDecodedClip(spec: spec)
    }
}

public actor FakeDecodedClip: DecodedClip {
    public nonisolated let format: AudioFormat
    public nonisolated let frameCount: Int
    private let tag: Int
    private let counting: Bool
    private var position = 0

    public init(spec: FakeDecoder.Spec) {
        format = spec.format
        frameCount = spec.frames
        tag = spec.tag
        counting = spec.counting
    }

    public func read(maxFrames: Int) async throws -> AudioBuffer? {
        let frames = min(maxFrames, frameCount - position)
        guard frames > 0 else { return nil }
        let values = (position..<(position + frames)).flatMap { frame in
            Array(repeating: counting ? tag + frame : tag, count: format.channels)
        }
        position += frames
        let samples: AudioSamples = switch format.sampleFormat {
        case .s16: .s16(values.map { Int16(truncatingIfNeeded: $0) })
        case .s32: .s32(values.map { Int32(truncatingIfNeeded: $0) })
        case .float32: .float32(values.map { Float($0) })
        }
        return AudioBuffer(samples: samples, channels: format.channels)
    }

    public func seek(toFrame frame: Int) async throws { position = min(max(frame, 0), frameCount) }

    public func close() async {}
}

/// Helpers shared by the core tests.
public enum Fixtures {
    /// A clip for `decoder(_:)`; the decoder's spec decides its tag.
    public static func clip(_ id: String) -> PlayableClip {
        PlayableClip(id: id, source: ClipSource(file: "\(id).wav", path: "/clips/\(id).wav"))
    }

    public static func decoder(_ clips: [(String, Int, Int)]) -> FakeDecoder {
        FakeDecoder(clips: Dictionary(uniqueKeysWithValues: clips.map { id, tag, frames in
            ("/clips/\(id).wav", FakeDecoder.Spec(tag: tag, frames: frames))
        }))
    }
}
