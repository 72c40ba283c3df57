import JukeboxCore

/// Serves made-up clips keyed by path. Every sample of a clip equals its tag, so the sink can
/// tell clips apart; a clip can also be made to fail on open.
struct FakeDecoder: ClipDecoder {
    struct Spec: Sendable {
        var tag: Int
        var frames: Int
        var format = AudioFormat(sampleFormat: .s16, sampleRate: 1000, channels: 1)
        var failure: String?
        /// When set, sample n of the clip is `tag + n` instead of `tag`, so a test can see
        /// exactly which frames were written (the write's tag is then its first frame).
        var counting = false
    }

    var clips: [String: Spec]

    func open(_ source: ClipSource) async throws -> any DecodedClip {
        guard let spec = clips[source.path] else { throw ClipDecodeError(file: source.file, reason: "no such file") }
        if let failure = spec.failure { throw ClipDecodeError(file: source.file, reason: failure) }
        return FakeDecodedClip(spec: spec)
    }
}

actor FakeDecodedClip: DecodedClip {
    nonisolated let format: AudioFormat
    nonisolated let frameCount: Int
    private let tag: Int
    private let counting: Bool
    private var position = 0

    init(spec: FakeDecoder.Spec) {
        format = spec.format
        frameCount = spec.frames
        tag = spec.tag
        counting = spec.counting
    }

    func read(maxFrames: Int) async throws -> AudioBuffer? {
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

    func seek(toFrame frame: Int) async throws { position = min(max(frame, 0), frameCount) }

    func close() async {}
}

/// Helpers shared by the core tests.
enum Fixtures {
    /// A clip for `decoder(_:)`; the decoder's spec decides its tag.
    static func clip(_ id: String) -> PlayableClip {
        PlayableClip(id: id, source: ClipSource(file: "\(id).wav", path: "/clips/\(id).wav"))
    }

    static func decoder(_ clips: [(String, Int, Int)]) -> FakeDecoder {
        FakeDecoder(clips: Dictionary(uniqueKeysWithValues: clips.map { id, tag, frames in
            ("/clips/\(id).wav", FakeDecoder.Spec(tag: tag, frames: frames))
        }))
    }
}
