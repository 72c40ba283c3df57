/// Keeps the mix of music and clip under `ceiling`, peaks between samples included, so the
/// sum never clips: the clips' loudness gain already stops at −1 dBTP, and this is the same
/// ceiling for what the two make together.
///
/// Each block is looked at whole before it is scaled: the gain each sample needs is found
/// first, then smoothed so that it is already down when a peak comes (over `attackFrames`)
/// and comes back up slowly (over `releaseFrames`), and never above what any sample needs.
/// Between samples, the peak is estimated from the four around it (a cubic through them),
/// which is where a digital-to-analogue converter's output overshoots the samples.
struct MixLimiter {
    let channels: Int
    let ceiling: Float
    /// How far the gain may rise per frame (from the reduction back to 1 over `releaseFrames`).
    private let releaseStep: Float
    private let attackFrames: Int
    /// The gain at the end of the last block, and its last three frames (for the peaks between
    /// the blocks).
    private var gain: Float = 1
    private var history: [Float]

    /// −1 dBTP, as the loudness gain.
    static let defaultCeiling: Float = 0.891_250_938

    init(channels: Int, sampleRate: Int, ceiling: Float = defaultCeiling) {
        self.channels = max(channels, 1)
        self.ceiling = ceiling
        attackFrames = max(sampleRate / 500, 1)  // 2 ms
        releaseStep = 1 / Float(max(sampleRate / 10, 1))  // all the way back in 100 ms
        history = [Float](repeating: 0, count: 3 * self.channels)
    }

    /// Scales `samples` (interleaved frames) in place; returns the lowest gain it applied.
    @discardableResult
    mutating func apply(_ samples: inout [Float]) -> Float {
        let frames = samples.count / channels
        guard frames > 0 else { return 1 }
        // The gain each frame needs, peaks between samples included.
        var needed = [Float](repeating: 1, count: frames)
        var any = false
        let all = history + samples
        for frame in 0..<frames {
            var peak: Float = 0
            for channel in 0..<channels {
                let index = (frame + 3) * channels + channel
                let (a, b, c, d) = (all[index - 3 * channels], all[index - 2 * channels], all[index - channels], all[index])
                // Halfway between b and c on the cubic through a, b, c and d.
                let between = (9 * (b + c) - a - d) / 16
                peak = max(peak, abs(c), abs(between))
            }
            if peak > ceiling {
                needed[frame] = ceiling / peak
                any = true
            }
        }
        history = Array(all[(all.count - 3 * channels)...])
        if !any, gain >= 1 { return 1 }
        // Down ahead of each peak: the gain may fall to what a frame needs over `attackFrames`.
        var smoothed = needed
        let fall = 1 / Float(attackFrames)
        for frame in stride(from: frames - 2, through: 0, by: -1) {
            smoothed[frame] = min(needed[frame], smoothed[frame + 1] + fall)
        }
        // Back up no faster than `releaseStep`, from where the last block left it.
        var lowest: Float = 1
        var current = gain
        for frame in 0..<frames {
            current = min(current + releaseStep, smoothed[frame], 1)
            lowest = min(lowest, current)
            for channel in 0..<channels {
                let index = frame * channels + channel
                samples[index] = min(max(samples[index] * current, -ceiling), ceiling)
            }
        }
        gain = current
        return lowest
    }
}
