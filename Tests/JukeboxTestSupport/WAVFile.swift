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
        let width = encoding.bytesPerSample
        let data = [UInt8](unsafeUninitializedCapacity: samples.count * width) { buffer, count in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            samples.withUnsafeBufferPointer { samples in
                for index in samples.indices {
                    let clamped = min(max(samples[index], -1), 1)
                    let value: Int64 = switch encoding {
                    case .u8: Int64(UInt8(clamping: Int((clamped * 127).rounded()) + 128))
                    case .s16: Int64((clamped * 32_767).rounded())
                    case .s24: Int64((clamped * 8_388_607).rounded())
                    case .s32: Int64((clamped * 2_147_483_647).rounded())
                    case .float32: Int64(Float(clamped).bitPattern)
                    case .float64: Int64(bitPattern: clamped.bitPattern)
                    }
                    store(value, bytes: width, into: raw, at: index * width)
                }
            }
            count = samples.count * width
        }
        return wrap(data, encoding: encoding, rate: rate, channels: channels)
    }

    /// A 32-bit float WAV of `samples` as given, unclamped: NaN, ±Inf and overs included, as
    /// a broken encoder or a corrupt file may hold them.
    public static func rawFloat32(_ samples: [Float], rate: Int, channels: Int) -> [UInt8] {
        let data = [UInt8](unsafeUninitializedCapacity: samples.count * 4) { buffer, count in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            for (index, sample) in samples.enumerated() { store(Int64(sample.bitPattern), bytes: 4, into: raw, at: index * 4) }
            count = samples.count * 4
        }
        return wrap(data, encoding: .float32, rate: rate, channels: channels)
    }

    /// The low `bytes` bytes of `value`, little-endian, at `offset`.
    static func store(_ value: Int64, bytes: Int, into raw: UnsafeMutableRawBufferPointer, at offset: Int) {
        let little = UInt64(bitPattern: value).littleEndian
        withUnsafeBytes(of: little) { source in
            raw.baseAddress!.advanced(by: offset).copyMemory(from: source.baseAddress!, byteCount: bytes)
        }
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

    /// A sine tone, so each test clip can be told apart by ear and by frequency. The
    /// second channel and those after it carry it at half the amplitude.
    public static func tone(frequency: Double, frames: Int, rate: Int, channels: Int, amplitude: Double = 0.5) -> [Double] {
        [Double](unsafeUninitializedCapacity: frames * channels) { buffer, count in
            var index = 0
            for frame in 0..<frames {
                let value = amplitude * sin(2 * Double.pi * frequency * Double(frame) / Double(rate))
                for channel in 0..<channels {
                    buffer[index] = channel == 0 ? value : value * 0.5
                    index += 1
                }
            }
            count = index
        }
    }

    /// The 16-bit little-endian PCM a 16-bit WAV of `samples` holds: what ALSA should receive.
    public static func pcm16(_ samples: [Double]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: samples.count * 2) { buffer, count in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            for (index, sample) in samples.enumerated() {
                store(Int64((min(max(sample, -1), 1) * 32_767).rounded()), bytes: 2, into: raw, at: index * 2)
            }
            count = samples.count * 2
        }
    }

    static func append(_ data: inout [UInt8], _ value: Int64, bytes: Int) {
        for index in 0..<bytes { data.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}

/// A fresh folder under the system temporary directory, removed when the test is done. Its
/// name holds the test process's pid (`jukebox-test-PID-…`), so the folders of a run that
/// was killed before it could remove them are removed by the next (`sweep`).
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        _ = Self.swept
        var template = Array((NSTemporaryDirectory() + "jukebox-test-\(getpid())-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Done once a run, before its first folder.
    private static let swept: Void = sweep()

    /// Removes the test folders of runs whose process is gone; folders named the old way
    /// (without a pid) once they are a day old.
    static func sweep() {
        let root = NSTemporaryDirectory()
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: root)) ?? [] where name.hasPrefix("jukebox-test-") {
            let parts = name.dropFirst("jukebox-test-".count).split(separator: "-", maxSplits: 1)
            let folder = root + name
            if parts.count == 2, let pid = pid_t(parts[0]) {
                if pid != getpid(), kill(pid, 0) != 0, errno == ESRCH { try? manager.removeItem(atPath: folder) }
            } else if let modified = (try? manager.attributesOfItem(atPath: folder))?[.modificationDate] as? Date, modified < Date() - 86_400 {
                try? manager.removeItem(atPath: folder)
            }
        }
    }

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
