import JukeboxAudio
import JukeboxLoudness
import JukeboxSndFile
import JukeboxTestSupport
import Testing

/// libebur128's figures for files the tests write, checked against ffmpeg's ebur128 filter,
/// and the gain that brings a clip to a target without letting its true peak over −1 dBTP.
@Suite("Loudness meter")
struct EBUR128MeterTests {
    let folder: TemporaryDirectory
    init() throws { folder = try TemporaryDirectory() }

    func measure(_ name: String) async throws -> Loudness {
        try await EBUR128Meter().measure(ClipSource(file: name, path: folder.file(name)), decoder: SndFileDecoder())
    }

    @Test(arguments: [
        (WAVFile.Encoding.s16, 1, 0.5), (.s16, 2, 0.05), (.float32, 2, 0.9), (.s32, 1, 0.2), (.float32, 6, 0.3),
    ])
    func theMeterAgreesWithFFmpeg(encoding: WAVFile.Encoding, channels: Int, amplitude: Double) async throws {
        let rate = 48_000
        let samples = WAVFile.tone(frequency: 997, frames: rate * 4, rate: rate, channels: channels, amplitude: amplitude)
        let name = "tone-\(encoding)-\(channels).wav"
        try folder.write(name, WAVFile.bytes(samples, encoding: encoding, rate: rate, channels: channels))
        let ours = try await measure(name)
        // A mono clip is heard on both channels: measured as dual mono by both.
        let theirs = try await FFmpegLoudness.measure(["-i", folder.file(name)], dualMono: channels == 1)
        let integrated = try #require(ours.integrated)
        #expect(abs(integrated - theirs.integrated) <= 0.15, "libebur128 \(integrated), ffmpeg \(theirs)")
        #expect(abs(ours.truePeak - theirs.truePeak) <= 0.3, "libebur128 \(ours.truePeak) dBTP, ffmpeg \(theirs)")
    }

    /// A mono clip is played on both channels of a stereo device: it measures as loud as the
    /// stereo clip with its samples in both channels, and so gets the same gain.
    @Test func aMonoClipMeasuresAsTheStereoClipItIsPlayedAs() async throws {
        let mono = WAVFile.tone(frequency: 440, frames: 48_000 * 3, rate: 48_000, channels: 1, amplitude: 0.25)
        try folder.write("mono.wav", WAVFile.bytes(mono, encoding: .s16, rate: 48_000, channels: 1))
        try folder.write("both.wav", WAVFile.bytes(mono.flatMap { [$0, $0] }, encoding: .s16, rate: 48_000, channels: 2))
        let one = try #require(try await measure("mono.wav").integrated)
        let two = try #require(try await measure("both.wav").integrated)
        #expect(abs(one - two) <= 0.05, "mono \(one) LUFS, the same in stereo \(two) LUFS")
        let single = try await FFmpegLoudness.measure(["-i", folder.file("mono.wav")])
        #expect(abs(one - (single.integrated + 3.01)) <= 0.15, "mono \(one) LUFS; one channel alone, by ffmpeg: \(single)")
    }

    @Test func silenceHasNoIntegratedLoudnessAndGetsNoGain() async throws {
        try folder.write("silence.wav", WAVFile.bytes(Array(repeating: 0, count: 48_000), encoding: .s16, rate: 48_000, channels: 1))
        let silence = try await measure("silence.wav")
        #expect(silence.integrated == nil)
        #expect(silence.gain(toward: -18) == 0)
    }

    @Test func theGainStopsWhereTheTruePeakWouldPassMinusOneDBTP() {
        // Under, at and over the cap.
        #expect(Loudness(integrated: -30, truePeak: -20).gain(toward: -18) == 12)
        #expect(Loudness(integrated: -30, truePeak: -13).gain(toward: -18) == 12)
        #expect(Loudness(integrated: -30, truePeak: -3).gain(toward: -18) == 2)
        // Louder than the target: turned down, whatever the peak.
        #expect(Loudness(integrated: -8, truePeak: 0.5).gain(toward: -18) == -10)
    }

    @Test func aFileThatIsNotAudioIsAClearError() async throws {
        try folder.write("notes.wav", text: "not audio")
        await #expect(throws: ClipDecodeError.self) { try await measure("notes.wav") }
    }
}
