import JukeboxCore
import JukeboxSndFile
import JukeboxTestSupport
import Testing

@Suite("libsndfile decoder", .timeLimit(.minutes(1)))
struct SndFileDecoderTests {
    let folder: TemporaryDirectory
    init() throws { folder = try TemporaryDirectory() }

    func decodeAll(_ path: String) async throws -> (AudioFormat, Int, AudioSamples) {
        let clip = try await SndFileDecoder().open(ClipSource(file: FilePath.lastComponent(path), path: path))
        var all: AudioSamples?
        while let block = try await clip.read(maxFrames: 1000) {
            #expect(block.channels == clip.format.channels)
            switch (all, block.samples) {
            case (nil, let samples): all = samples
            case (.s16(let a)?, .s16(let b)): all = .s16(a + b)
            case (.s32(let a)?, .s32(let b)): all = .s32(a + b)
            case (.float32(let a)?, .float32(let b)): all = .float32(a + b)
            default: Issue.record("block format changed mid-clip")
            }
        }
        await clip.close()
        return (clip.format, clip.frameCount, try #require(all))
    }

    static let flavours: [(WAVFile.Encoding, Int, Int)] = [
        (.u8, 8000, 1), (.s16, 12_000, 1), (.s16, 44_100, 2), (.s24, 48_000, 2), (.s32, 22_050, 1),
        (.float32, 44_100, 2), (.float64, 12_000, 1),
    ]

    @Test(arguments: flavours)
    func everyWAVFlavourDecodesToTheSamplesWritten(encoding: WAVFile.Encoding, rate: Int, channels: Int) async throws {
        let samples = WAVFile.tone(frequency: 440, frames: 2500, rate: rate, channels: channels) + [1, -1, 0].flatMap { Array(repeating: $0, count: channels) }
        let path = try folder.write("\(encoding)-\(rate)-\(channels).wav", WAVFile.bytes(samples, encoding: encoding, rate: rate, channels: channels))
        let (format, frames, decoded) = try await decodeAll(path)
        #expect(format.sampleRate == rate)
        #expect(format.channels == channels)
        #expect(frames == 2503)
        #expect(decoded.count == samples.count)
        switch (encoding, decoded) {
        case (.u8, .s16(let values)):
            #expect(values == samples.map { Int16((min(max($0, -1), 1) * 127).rounded()) << 8 })
        case (.s16, .s16(let values)):
            #expect(values == samples.map { Int16(($0 * 32_767).rounded()) })
        case (.s24, .s32(let values)):
            #expect(values == samples.map { Int32(($0 * 8_388_607).rounded()) << 8 })
        case (.s32, .s32(let values)):
            #expect(values == samples.map { Int32(($0 * 2_147_483_647).rounded()) })
        case (.float32, .float32(let values)), (.float64, .float32(let values)):
            #expect(values == samples.map { Float($0) })
        default:
            Issue.record("\(encoding) decoded as \(decoded.format)")
        }
    }

    /// The decoder reads a second ahead of what is asked; what comes out is the same frames, in
    /// blocks no longer than asked, and a seek drops what was read ahead.
    @Test func readsAndSeeksGiveTheFramesAskedForWhateverWasReadAhead() async throws {
        let rate = 8000
        let samples = (0..<(3 * rate)).map { Double($0 % 20_000) / 32_767 }
        let path = try folder.write("ramp.wav", WAVFile.bytes(samples, encoding: .s16, rate: rate, channels: 1))
        let expected = samples.map { Int16(($0 * 32_767).rounded()) }
        let clip = try await SndFileDecoder().open(ClipSource(file: "ramp.wav", path: path))
        func next(_ frames: Int) async throws -> [Int16] {
            guard case .s16(let values)? = try await clip.read(maxFrames: frames)?.samples else { return [] }
            return values
        }
        #expect(try await next(1000) == Array(expected[0..<1000]))
        #expect(try await next(3000) == Array(expected[1000..<4000]))
        try await clip.seek(toFrame: 20_000)
        #expect(try await next(3000) == Array(expected[20_000..<23_000]))
        try await clip.seek(toFrame: 500)
        #expect(try await next(700) == Array(expected[500..<1200]))
        try await clip.seek(toFrame: 23_500)
        #expect(try await next(2000) == Array(expected[23_500..<24_000]))
        #expect(try await clip.read(maxFrames: 2000) == nil)
        await clip.close()
    }

    /// However many frames a read asks for, it decodes no more than one of the player's blocks
    /// may hold (`Player.maxFrames`): under the limit it gets what it asks, at or over it the limit.
    @Test func noReadDecodesMoreThanAPlayerBlockMayHold() async throws {
        let format = AudioFormat(sampleFormat: .s16, sampleRate: 8000, channels: 4)
        let limit = format.maxBlockFrames
        let frames = 2 * limit + 500
        let path = try folder.write("long.wav", WAVFile.bytes([Double](repeating: 0.25, count: frames * 4), encoding: .s16, rate: 8000, channels: 4))
        let clip = try await SndFileDecoder().open(ClipSource(file: "long.wav", path: path))
        #expect(clip.format == format)
        #expect(try await clip.read(maxFrames: limit - 1)?.frames == limit - 1, "under")
        try await clip.seek(toFrame: 0)
        #expect(try await clip.read(maxFrames: limit)?.frames == limit, "at")
        try await clip.seek(toFrame: 0)
        #expect(try await clip.read(maxFrames: limit + 1)?.frames == limit, "over")
        #expect(try await clip.read(maxFrames: 1 << 30)?.frames == limit, "far over, read ahead")
        #expect(try await clip.read(maxFrames: 1 << 30)?.frames == 500, "the rest")
        await clip.close()
    }

    @Test func missingFileNamesTheFile() async throws {
        await #expect(throws: ClipDecodeError(file: "gone.wav", reason: "no such file (looked for \(folder.file("gone.wav")))")) {
            _ = try await SndFileDecoder().open(ClipSource(file: "gone.wav", path: folder.file("gone.wav")))
        }
    }

    @Test func corruptFileIsRejectedWithAReason() async throws {
        let path = try folder.write("noise.wav", Array("this is not audio at all, just text".utf8))
        do {
            _ = try await SndFileDecoder().open(ClipSource(file: "noise.wav", path: path))
            Issue.record("a text file decoded")
        } catch let error as ClipDecodeError {
            #expect(error.file == "noise.wav")
            #expect(error.reason.hasPrefix("not an audio file libsndfile can read"), "\(error.reason)")
        }
    }

    @Test func truncatedWAVStillPlaysWhatItHas() async throws {
        let full = WAVFile.bytes(WAVFile.tone(frequency: 300, frames: 1000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
        let path = try folder.write("cut.wav", Array(full.prefix(44 + 600)))
        let (_, _, decoded) = try await decodeAll(path)
        #expect(decoded.count == 300)
    }

    @Test func folderIsNotAClip() async throws {
        await #expect(throws: ClipDecodeError(file: "dir", reason: "is a folder, not an audio file")) {
            _ = try await SndFileDecoder().open(ClipSource(file: "dir", path: folder.path))
        }
    }

    @Test func probeReportsFormatAndDuration() async throws {
        let path = try folder.write("two.wav", WAVFile.bytes(Array(repeating: 0, count: 24_000), encoding: .s16, rate: 12_000, channels: 1))
        let probe = try await SndFileDecoder().probe(ClipSource(file: "two.wav", path: path))
        #expect(probe.format == AudioFormat(sampleFormat: .s16, sampleRate: 12_000, channels: 1))
        #expect(probe.duration == .seconds(2))
    }
}

/// Files that are not audio, opened while good ones are opened beside them on other threads:
/// each bad one is refused with its own reason, and each good one decodes whole. (libsndfile
/// closes the descriptor of an open that fails; closing it again could close another file
/// opened under the same number meanwhile, and its reason is kept for the whole process.)
@Suite("libsndfile decoder, opened side by side", .timeLimit(.minutes(1)))
struct SndFileSideBySideTests {
    @Test func badFilesRefusedBesideGoodOnesLeaveTheGoodOnesWhole() async throws {
        let folder = try TemporaryDirectory()
        let samples = WAVFile.tone(frequency: 440, frames: 4000, rate: 8000, channels: 1)
        let good = try folder.write("good.wav", WAVFile.bytes(samples, encoding: .s16, rate: 8000, channels: 1))
        let bad = try folder.write("bad.wav", Array("this is not audio at all, just text".utf8))
        let rounds = 150
        let (refusals, decoded) = try await withThrowingTaskGroup(of: (refused: [String], frames: [Int]).self) { group in
            for _ in 0..<3 {
                group.addTask {
                    var reasons: [String] = []
                    for _ in 0..<rounds {
                        do {
                            _ = try await SndFileDecoder().open(ClipSource(file: "bad.wav", path: bad))
                            reasons.append("opened")
                        } catch let error as ClipDecodeError {
                            reasons.append(error.reason)
                        }
                    }
                    return (reasons, [])
                }
                group.addTask {
                    var frames: [Int] = []
                    for _ in 0..<rounds {
                        let clip = try await SndFileDecoder().open(ClipSource(file: "good.wav", path: good))
                        var count = 0
                        while let block = try await clip.read(maxFrames: 4000) { count += block.frames }
                        await clip.close()
                        frames.append(count)
                    }
                    return ([], frames)
                }
            }
            return try await group.reduce(into: ([String](), [Int]())) { $0.0 += $1.refused; $0.1 += $1.frames }
        }
        #expect(refusals.count == 3 * rounds)
        #expect(refusals.allSatisfy { $0.hasPrefix("not an audio file libsndfile can read") }, "\(Set(refusals))")
        #expect(decoded.count == 3 * rounds)
        #expect(decoded.allSatisfy { $0 == 4000 }, "\(Set(decoded))")
    }
}
