import Foundation
import JukeboxTestSupport
import Testing
@testable import JukeboxBed

/// The bed's limiter measured by an independent meter: ffmpeg's `ebur128=peak=true` (BS.1770
/// true peak) reads each signal before and after it. Those that overshoot between their
/// samples (clipped noise, a 12 kHz tone, a full-scale clip over music, band-limited pink
/// noise) must all come out at or under −1 dBTP, the ceiling docs/music.md promises.
@Suite("Music bed: true peak", .timeLimit(.minutes(1)))
struct TruePeakTests {
    static let rate = 44_100
    static let seconds = 3

    /// A repeatable noise source (xorshift), uniform in −1…1.
    struct Noise {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        mutating func next() -> Double {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Double(state >> 11) / Double(1 << 52) - 1
        }
    }

    /// Stereo signals, interleaved.
    static func signals() -> [(name: String, samples: [Float])] {
        let frames = rate * seconds
        var noise = Noise()
        let clipped = (0..<(2 * frames)).map { _ in Float(max(-1, min(1, 2 * noise.next()))) }
        // Stereo with both channels alike.
        func both(_ value: (Double) -> Double) -> [Float] {
            var samples = [Float](repeating: 0, count: 2 * frames)
            for frame in 0..<frames {
                let sample = Float(value(Double(frame) / Double(rate)))
                samples[2 * frame] = sample
                samples[2 * frame + 1] = sample
            }
            return samples
        }
        let tone = both { 1.1 * sin(2 * Double.pi * 12_000 * $0 + 0.3) }
        let clipOverMusic = both { 0.5 * sin(2 * Double.pi * 440 * $0) + 0.95 * sin(2 * Double.pi * 3_100 * $0 + 1) }
        // Pink noise (Paul Kellet's filter), band-limited by a one-pole low-pass at ~15 kHz,
        // at a sample peak of 1.
        var (b0, b1, b2, lowPassed): (Double, Double, Double, Double) = (0, 0, 0, 0)
        var pink = (0..<(2 * frames)).map { _ -> Double in
            let white = noise.next()
            b0 = 0.99765 * b0 + white * 0.0990460
            b1 = 0.96300 * b1 + white * 0.2965164
            b2 = 0.57000 * b2 + white * 1.0526913
            lowPassed += 0.88 * (b0 + b1 + b2 + white * 0.1848 - lowPassed)
            return lowPassed
        }
        let peak = pink.map(abs).max() ?? 1
        pink = pink.map { $0 / peak }
        return [("clipped noise", clipped), ("12 kHz tone", tone), ("a full-scale clip over music", clipOverMusic), ("band-limited pink noise", pink.map(Float.init))]
    }

    /// ffmpeg's true peak of `samples`, in dBTP.
    func truePeak(_ samples: [Float], in folder: TemporaryDirectory, name: String) async throws -> Double {
        let bytes = try await Loopback.offThePool { WAVFile.bytes(samples.map(Double.init), encoding: .float32, rate: Self.rate, channels: 2) }
        let path = try folder.write(name + ".wav", bytes)
        let run = try await Tool.run("ffmpeg", ["-nostdin", "-hide_banner", "-nostats", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"])
        // The summary's "True peak:" block, then "Peak: X dBFS".
        let summary = try #require(run.stderr.range(of: "True peak:").map { run.stderr[$0.upperBound...] }, "\(run.stderr.suffix(500))")
        let line = try #require(summary.split(separator: "\n").first { $0.contains("Peak:") })
        let value = line.split(separator: " ").compactMap { Double($0) }.first
        return try #require(value, "\(line)")
    }

    /// `samples` through the limiter in 25 ms blocks, then its delay flushed with
    /// silence; and how long the limiting took.
    static func limited(_ samples: [Float]) -> (out: [Float], took: Duration) {
        var limiter = MixLimiter(channels: 2, sampleRate: rate)
        var out: [Float] = []
        out.reserveCapacity(samples.count + limiter.delayFrames * 2)
        let started = ContinuousClock.now
        let block = rate / 40 * 2
        for start in stride(from: 0, to: samples.count, by: block) {
            var part = Array(samples[start..<min(start + block, samples.count)])
            limiter.apply(&part)
            out += part
        }
        var tail = [Float](repeating: 0, count: limiter.delayFrames * 2)
        limiter.apply(&tail)
        out += tail
        return (out, ContinuousClock.now - started)
    }

    @Test func everySignalComesOutUnderTheCeiling() async throws {
        let folder = try TemporaryDirectory()
        // Seconds of CPU in a debug build: on a thread of its own, never on the cooperative
        // pool, whose two threads every other test shares.
        let signals = try await Loopback.offThePool { Self.signals() }
        for (name, samples) in signals {
            let (out, took) = try await Loopback.offThePool { Self.limited(samples) }
            let before = try await truePeak(samples, in: folder, name: "before")
            let after = try await truePeak(out, in: folder, name: "after")
            print("true peak: \(name) \(before) → \(after) dBTP (\(Self.seconds) s limited in \(took))")
            #expect(before > -1, "\(name): the signal must overshoot for the test to mean anything (\(before) dBTP)")
            #expect(after <= -1, "\(name): \(after) dBTP after the limiter")
            // Not crushed: within 3 dB of the ceiling.
            #expect(after > -4, "\(name): \(after) dBTP after the limiter")
        }
    }
}
