import Glibc
import Testing
@testable import JukeboxResample

/// libsoxr through `Resampler`: lengths come out in the ratio of the rates, whole, and a tone
/// keeps its frequency.
@Suite("Sample-rate conversion")
struct ResamplerTests {
    static func tone(_ frequency: Double, rate: Int, frames: Int, channels: Int) -> [Float] {
        var samples: [Float] = []
        samples.reserveCapacity(frames * channels)
        for frame in 0..<frames {
            let phase = 2 * Double.pi * frequency * Double(frame) / Double(rate)
            for _ in 0..<channels { samples.append(Float(0.5 * sin(phase))) }
        }
        return samples
    }

    static func crossings(_ samples: [Float], channels: Int) -> Int {
        var count = 0
        for index in stride(from: channels, to: samples.count, by: channels) where (samples[index - channels] < 0) != (samples[index] < 0) { count += 1 }
        return count
    }

    @Test(arguments: [(12_000, 48_000, 1), (44_100, 48_000, 2), (96_000, 48_000, 2), (48_000, 44_100, 2)])
    func everyFrameComesOutAtTheNewRate(_ rates: (Int, Int, Int)) throws {
        let (from, to, channels) = rates
        let resampler = try Resampler(inputRate: from, outputRate: to, channels: channels)
        let input = Self.tone(500, rate: from, frames: from, channels: channels)
        var output: [Float] = []
        // Fed in blocks, as the player writes (50 ms here, as short as a fade's blocks).
        let block = from / 20 * channels
        for start in stride(from: 0, to: input.count, by: block) {
            output += resampler.process(Array(input[start..<min(start + block, input.count)]))
        }
        output += resampler.flush()
        let frames = output.count / channels
        #expect(abs(frames - to) <= 2, "\(frames) frames for one second at \(to) Hz")
        let hertz = Double(Self.crossings(output, channels: channels)) / 2
        #expect(abs(hertz - 500) <= 2, "\(hertz) Hz")
        // After a flush it takes a new clip from its start.
        let again = resampler.process(Self.tone(500, rate: from, frames: from / 10, channels: channels)) + resampler.flush()
        #expect(abs(again.count / channels - to / 10) <= 2)
    }
}
