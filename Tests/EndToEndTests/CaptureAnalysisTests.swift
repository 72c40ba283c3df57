import JukeboxTestSupport
import Testing

@Suite("Capture analysis")
struct CaptureAnalysisTests {
    @Test func findsEachToneAndTheSilenceBetween() {
        let a = WAVFile.tone(frequency: 500, frames: 8820, rate: 44_100, channels: 2)
        let gap = [Double](repeating: 0, count: 4410 * 2)
        let b = WAVFile.tone(frequency: 1100, frames: 13_230, rate: 44_100, channels: 2)
        let c = WAVFile.tone(frequency: 800, frames: 4410, rate: 44_100, channels: 2)
        let capture = CaptureAnalysis(bytes: WAVFile.pcm16(a + gap + b + c), frequencies: [500, 800, 1100])
        #expect(capture.segments == [
            .init(frequency: 500, start: 0, end: 20), .init(frequency: 1100, start: 30, end: 60), .init(frequency: 800, start: 60, end: 70),
        ])
        #expect(CaptureAnalysis.gaps(capture.segments) == [10, 0])
        #expect(capture.twoToneWindows.isEmpty)
    }

    @Test func twoTonesAtOnceAreFlagged() {
        let a = WAVFile.tone(frequency: 500, frames: 4410, rate: 44_100, channels: 2, amplitude: 0.3)
        let b = WAVFile.tone(frequency: 1400, frames: 4410, rate: 44_100, channels: 2, amplitude: 0.3)
        let mixed = zip(a, b).map { $0 + $1 }
        #expect(CaptureAnalysis(bytes: WAVFile.pcm16(mixed), frequencies: [500, 1400]).twoToneWindows.count == 10)
    }
}
