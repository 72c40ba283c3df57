/// A block of decoded audio on its way from a decoder to a sink.
public struct AudioBuffer: Sendable, Equatable {
    public var samples: AudioSamples
    public var channels: Int

    public init(samples: AudioSamples, channels: Int) {
        self.samples = samples
        self.channels = channels
    }

    public var frames: Int { channels > 0 ? samples.count / channels : 0 }

    /// The samples as little-endian bytes, exactly as an interleaved ALSA write sends them.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch samples {
        case .s16(let samples): try samples.withUnsafeBytes(body)
        case .s32(let samples): try samples.withUnsafeBytes(body)
        case .float32(let samples): try samples.withUnsafeBytes(body)
        }
    }
}

extension AudioBuffer {
    /// Frames `range` of this buffer, as a buffer of their own.
    public func frames(_ range: Range<Int>) -> AudioBuffer {
        let samples = range.lowerBound * channels..<range.upperBound * channels
        return switch self.samples {
        case .s16(let all): AudioBuffer(samples: .s16(Array(all[samples])), channels: channels)
        case .s32(let all): AudioBuffer(samples: .s32(Array(all[samples])), channels: channels)
        case .float32(let all): AudioBuffer(samples: .float32(Array(all[samples])), channels: channels)
        }
    }

    /// Digital silence in `format`, for lead-in and for keeping an idle device fed.
    public static func silence(_ format: AudioFormat, frames: Int) -> AudioBuffer {
        let count = max(frames, 0) * format.channels
        let samples: AudioSamples = switch format.sampleFormat {
        case .s16: .s16(Array(repeating: 0, count: count))
        case .s32: .s32(Array(repeating: 0, count: count))
        case .float32: .float32(Array(repeating: 0, count: count))
        }
        return AudioBuffer(samples: samples, channels: format.channels)
    }
}
