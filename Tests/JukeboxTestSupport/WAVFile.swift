import Foundation

/// Writes WAV files byte by byte, independently of libsndfile, so decoding is checked
/// against an encoder that shares no code with the decoder.
public enum WAVFile {
    public enum Encoding: String, Sendable, CaseIterable, CustomStringConvertible {
        case u8, s16, s24, s32, float32, float64

        public var bytesPerSample: Int {
            switch self {
            case .u8: 1
            case .s16: 2
            case .s24: 3
            case .s32, .float32: 4
            case .float64: 8
            }
        }

        public var isFloat: Bool { self == .float32 || self == .float64 }
        public var description: String { rawValue }
    }

    /// `samples` are interleaved, in -1...1.
    public static func bytes(_ samples: [Double], encoding: Encoding, rate: Int, channels: Int) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(samples.count * encoding.bytesPerSample)
        for sample in samples {
            let clamped = min(max(sample, -1), 1)
            switch encoding {
            case .u8: data.append(UInt8(clamping: Int((clamped * 127).rounded()) + 128))
            case .s16: append(&data, Int64((clamped * 32_767).rounded()), bytes: 2)
            case .s24: append(&data, Int64((clamped * 8_388_607).rounded()), bytes: 3)
            case .s32: append(&data, Int64((clamped * 2_147_483_647).rounded()), bytes: 4)
            case .float32: append(&data, Int64(Float(clamped).bitPattern), bytes: 4)
            case .float64: append(&data, Int64(bitPattern: clamped.bitPattern), bytes: 8)
            }
        }
        return wrap(data, encoding: encoding, rate: rate, channels: channels)
    }

    /// A 32-bit float WAV of `samples` as given, unclamped: NaN, ±Inf and overs included, as
    /// a broken encoder or a corrupt file may hold them.
    public static func rawFloat32(_ samples: [Float], rate: Int, channels: Int) -> [UInt8] {
        var data: [UInt8] = []
        for sample in samples { append(&data, Int64(sample.bitPattern), bytes: 4) }
        return wrap(data, encoding: .float32, rate: rate, channels: channels)
    }

    static func wrap(_ data: [UInt8], encoding: Encoding, rate: Int, channels: Int) -> [UInt8] {
        var file = Array("RIFF".utf8)
        append(&file, Int64(36 + data.count), bytes: 4)
        file += Array("WAVEfmt ".utf8)
        append(&file, 16, bytes: 4)
        append(&file, encoding.isFloat ? 3 : 1, bytes: 2)
        append(&file, Int64(channels), bytes: 2)
        append(&file, Int64(rate), bytes: 4)
        append(&file, Int64(rate * channels * encoding.bytesPerSample), bytes: 4)
        append(&file, Int64(channels * encoding.bytesPerSample), bytes: 2)
        append(&file, Int64(encoding.bytesPerSample * 8), bytes: 2)
        file += Array("data".utf8)
        append(&file, Int64(data.count), bytes: 4)
        return file + data
    }

    /// A sine tone, so each test clip can be told apart by ear and by frequency.
    public static func tone(frequency: Double, frames: Int, rate: Int, channels: Int, amplitude: Double = 0.5) -> [Double] {
        (0..<frames).flatMap { frame in
            let value = amplitude * sin(2 * Double.pi * frequency * Double(frame) / Double(rate))
            return (0..<channels).map { channel in channel == 0 ? value : value * 0.5 }
        }
    }

    /// The 16-bit little-endian PCM a 16-bit WAV of `samples` holds: what ALSA should receive.
    public static func pcm16(_ samples: [Double]) -> [UInt8] {
        var data: [UInt8] = []
        for sample in samples { append(&data, Int64((min(max(sample, -1), 1) * 32_767).rounded()), bytes: 2) }
        return data
    }

    static func append(_ data: inout [UInt8], _ value: Int64, bytes: Int) {
        for index in 0..<bytes { data.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}

/// A fresh folder under the system temporary directory, removed when the test is done.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        var template = Array((NSTemporaryDirectory() + "jukebox-test-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let target = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }

    @discardableResult
    public func write(_ name: String, text: String) throws -> String {
        try write(name, Array(text.utf8))
    }

    public func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: file(name))))
    }
}
