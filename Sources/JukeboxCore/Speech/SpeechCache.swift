#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder of synthesized announcements: one WAV file per text and engine, named by a
/// fingerprint of both, bounded by `Limits` with the least recently used going first (a file
/// is "used" when it is made or played; its modification time records that). Its calls block,
/// so they run on the synthesizer's threads.
public struct SpeechCache: Sendable {
    public struct Limits: Sendable, Equatable {
        public var files: Int
        public var bytes: Int
        public init(files: Int = 100, bytes: Int = 50 << 20) {
            self.files = files
            self.bytes = bytes
        }
    }

    public let folder: String
    public let limits: Limits
    /// One announcement's audio may be at most this large: at 48 kHz, 16-bit stereo this
    /// is over two minutes, twice what the longest text takes to say.
    public static let maxFileSize = 25 << 20

    public init(folder: String, limits: Limits = Limits()) {
        self.folder = FilePath.normalize(FilePath.absolute(folder))
        self.limits = limits
    }

    /// Where a daemon whose state file is `statePath` keeps its announcements.
    public static func folder(besideState statePath: String) -> String {
        StateFile.sibling(of: statePath, ".speech")
    }

    /// The file for `text` spoken by `command`: a 128-bit FNV-1a of both, in hex.
    public func path(for text: String, command: [String]) -> String {
        var high: UInt64 = 0x6c62_272e_07bb_0142, low: UInt64 = 0x62b8_2175_6295_c58d
        func mix(_ byte: UInt8) {
            // 128-bit FNV-1a: xor, then multiply by 2^88 + 0x13B (mod 2^128).
            low ^= UInt64(byte)
            let (carry, product) = low.multipliedFullWidth(by: 0x13B)
            (high, low) = (carry &+ high &* 0x13B &+ (low << 24), product)
        }
        for word in command {
            word.utf8.forEach(mix)
            mix(0)
        }
        text.utf8.forEach(mix)
        return "\(folder)/\(Self.hex(high))\(Self.hex(low)).wav"
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// True when the file is there, and marks it as just used.
    func hit(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 else { return false }
        _ = utimensat(AT_FDCWD, path, nil, 0)
        return true
    }

    /// Where the engine writes before the file is checked and kept (`keep`).
    func partialPath(for path: String) -> String { String(path.dropLast(4)) + ".partial.wav" }

    func discard(_ path: String) { _ = unlink(path) }

    /// Puts a checked file in its place, then trims the folder to its limits.
    func keep(_ partial: String, as path: String) throws(FileWriteError) {
        guard rename(partial, path) == 0 else { throw FileWriteError(path: path, errno: errno) }
        trim(keeping: path)
    }

    /// Makes the folder (mode 0700) if it is not there.
    func makeFolder() throws(FileWriteError) { try FilePath.makeFolders(folder) }

    /// Removes the least recently used files until the folder is within its limits; `keep`
    /// (the file just made) always stays. Returns how many were removed.
    @discardableResult
    func trim(keeping keep: String) -> Int {
        guard let directory = opendir(folder) else { return 0 }
        var files: [(path: String, size: Int, used: timespec)] = []
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            // A file still being made is not counted, nor removed.
            guard name.hasSuffix(".wav"), !name.hasSuffix(".partial.wav"), !name.hasPrefix(".") else { continue }
            var info = stat()
            let path = "\(folder)/\(name)"
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            files.append((path, Int(info.st_size), info.st_mtim))
        }
        closedir(directory)
        files.sort { ($0.used.tv_sec, $0.used.tv_nsec) < ($1.used.tv_sec, $1.used.tv_nsec) }
        var (count, bytes) = (files.count, files.reduce(0) { $0 + $1.size })
        var removed = 0
        for file in files where (count > limits.files || bytes > limits.bytes) && file.path != keep {
            guard unlink(file.path) == 0 else { continue }
            count -= 1
            bytes -= file.size
            removed += 1
        }
        return removed
    }
}
