import JukeboxCore

/// Serves made-up clips keyed by path. Every sample of a clip equals its tag, so the sink can
/// tell clips apart; a clip can also be made to fail on open.
struct FakeDecoder: ClipDecoder {
    struct Spec: Sendable {
        var tag: Int
        var frames: Int
        var format = AudioFormat(sampleFormat: .s16, sampleRate: 1000, channels: 1)
        var failure: String?
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
    private var position = 0

    init(spec: FakeDecoder.Spec) {
        format = spec.format
        frameCount = spec.frames
        tag = spec.tag
    }

    func read(maxFrames: Int) async throws -> AudioBuffer? {
        let frames = min(maxFrames, frameCount - position)
        guard frames > 0 else { return nil }
        position += frames
        let count = frames * format.channels
        let samples: AudioSamples = switch format.sampleFormat {
        case .s16: .s16(Array(repeating: Int16(tag), count: count))
        case .s32: .s32(Array(repeating: Int32(tag), count: count))
        case .float32: .float32(Array(repeating: Float(tag), count: count))
        }
        return AudioBuffer(samples: samples, channels: format.channels)
    }

    func close() async {}
}

/// Helpers shared by the core tests.
enum Fixtures {
    static func clip(_ id: String, tag: Int) -> PlayableClip {
        PlayableClip(id: id, source: ClipSource(file: "\(id).wav", path: "/clips/\(id).wav"))
    }

    static func decoder(_ clips: [(String, Int, Int)]) -> FakeDecoder {
        FakeDecoder(clips: Dictionary(uniqueKeysWithValues: clips.map { id, tag, frames in
            ("/clips/\(id).wav", FakeDecoder.Spec(tag: tag, frames: frames))
        }))
    }
}
