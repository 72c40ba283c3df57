import Testing
@testable import JukeboxBed

@Suite("Music bed: its parts")
struct MixPartsTests {
    @Test("the ring keeps its frames in order across the wrap, and drops the newest")
    func ring() {
        var ring = FrameRing(capacityFrames: 4, channels: 2)
        #expect(ring.append([1, 1, 2, 2, 3, 3][...]) == 3)
        var out = [Float](repeating: 0, count: 4)
        #expect(ring.take(2, addingInto: &out) == 2)
        #expect(out == [1, 1, 2, 2])
        #expect(ring.append([4, 4, 5, 5, 6, 6, 7, 7][...]) == 3)
        #expect(ring.frames == 4 && ring.room == 0)
        #expect(ring.dropNewest(1) == 1)
        var rest = [Float](repeating: 1, count: 6)
        #expect(ring.take(5, addingInto: &rest, gain: 2) == 3)
        #expect(rest == [7, 7, 9, 9, 11, 11])
    }

    @Test("pipe samples: 16 bits, 24 in four bytes (sign from bit 23), 32 bits")
    func pcm() {
        let sixteen: [UInt8] = [0x00, 0x40, 0x00, 0x80]
        #expect(sixteen.withUnsafeBytes { PCMBytes.floats($0, bits: 16) } == [0.5, -1])
        let twentyFour: [UInt8] = [0x00, 0x00, 0xC0, 0x7F, 0x00, 0x00, 0x40, 0x00]
        #expect(twentyFour.withUnsafeBytes { PCMBytes.floats($0, bits: 24) } == [-0.5, 0.5])
        let thirtyTwo: [UInt8] = [0x00, 0x00, 0x00, 0xC0]
        #expect(thirtyTwo.withUnsafeBytes { PCMBytes.floats($0, bits: 32) } == [-0.5])
    }

    @Test("the limiter leaves a quiet mix alone and holds a loud one, peaks between samples too, under its ceiling")
    func limiter() {
        var limiter = MixLimiter(channels: 1, sampleRate: 8_000)
        var quiet = [Float](repeating: 0.5, count: 400)
        #expect(limiter.apply(&quiet) == 1)
        // Delayed by the look-ahead, and otherwise untouched.
        #expect(limiter.delayFrames == 32)
        #expect(quiet.prefix(32).allSatisfy { $0 == 0 } && quiet.dropFirst(32).allSatisfy { $0 == 0.5 })
        // Alternating samples at 0.85: under the ceiling, but the wave between them is not.
        var between = (0..<400).map { $0 % 4 < 2 ? Float(0.85) : -0.85 }
        #expect(limiter.apply(&between) < 1)
        var loud = [Float](repeating: 1.6, count: 400)
        limiter.apply(&loud)
        #expect(loud.allSatisfy { $0 <= MixLimiter.defaultCeiling })
    }

    @Test("the limiter's measure, eight frames at once, is each frame's own sum exactly", arguments: [1, 2, 3])
    func truePeaksMatchOneFrameAtATime(channels: Int) {
        // Odd counts (not a multiple of eight) and a signal with something between every sample.
        var state: UInt32 = 12_345
        for count in [1, 7, 8, 9, 1_103] {
            let frames = MixLimiter.tapsBefore + count + MixLimiter.tapsAfter
            let input = (0..<(frames * channels)).map { _ -> Float in
                state = state &* 1_664_525 &+ 1_013_904_223
                return Float(state >> 8) / Float(1 << 23) - 1
            }
            var peaks: [Float] = [], plane: [Float] = []
            MixLimiter.truePeaks(input, channels: channels, count: count, into: &peaks, plane: &plane)
            for frame in 0..<count {
                var expected: Float = 0
                for channel in 0..<channels {
                    let base = (MixLimiter.tapsBefore + frame) * channels + channel
                    expected = max(expected, abs(input[base]))
                    for phase in MixLimiter.phases {
                        var sum: Float = 0
                        for (tap, weight) in phase.enumerated() {
                            sum += weight * input[base + (tap - MixLimiter.tapsBefore) * channels]
                        }
                        expected = max(expected, abs(sum))
                    }
                }
                #expect(peaks[frame] == expected, "frame \(frame) of \(count), \(channels) channels")
            }
        }
    }
}
