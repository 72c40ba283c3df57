#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tone `jukebox test` plays: a second of 880 Hz at -12 dBFS, in 44.1 kHz 16-bit
/// stereo, rising and falling over 20 ms so it starts and ends without a click.
public enum TestTone {
    public static let format = AudioFormat(sampleFormat: .s16, sampleRate: 44_100, channels: 2)
    public static let seconds = 1.0
    static let frequency = 880.0
    static let amplitude = 0.25

    /// The tone's samples, interleaved; worked out once.
    public static let samples: [Int16] = {
        let frames = Int(seconds * Double(format.sampleRate))
        let fade = format.sampleRate / 50
        var samples = [Int16](repeating: 0, count: frames * format.channels)
        for frame in 0..<frames {
            let edge = min(frame, frames - 1 - frame)
            let envelope: Double = edge < fade ? 0.5 - 0.5 * cos(Double.pi * Double(edge) / Double(fade)) : 1
            let phase: Double = 2 * Double.pi * frequency * Double(frame) / Double(format.sampleRate)
            let value = Int16(amplitude * envelope * 32_767 * sin(phase))
            for channel in 0..<format.channels { samples[frame * format.channels + channel] = value }
        }
        return samples
    }()

    /// The tone as a WAV file's bytes.
    public static var wav: [UInt8] {
        let samples = samples
        let dataSize = samples.count * 2
        var bytes: [UInt8] = []
        bytes.reserveCapacity(44 + dataSize)
        func word(_ value: Int, _ size: Int) { for index in 0..<size { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) } }
        bytes += Array("RIFF".utf8); word(36 + dataSize, 4); bytes += Array("WAVEfmt ".utf8)
        word(16, 4); word(1, 2); word(format.channels, 2); word(format.sampleRate, 4)
        word(format.sampleRate * format.channels * 2, 4); word(format.channels * 2, 2); word(16, 2)
        bytes += Array("data".utf8); word(dataSize, 4)
        for sample in samples { word(Int(sample), 2) }
        return bytes
    }
}
