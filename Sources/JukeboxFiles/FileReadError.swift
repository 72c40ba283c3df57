#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a file could not be read, worded for people rather than as a raw POSIX error.
public struct FileReadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var errno: Int32
    /// Set when the file is larger than the reader's limit, in bytes.
    public var limit: Int?
    public var notRegular = false

    public init(errno: Int32) { self.errno = errno }
    init(tooLarge limit: Int) {
        self.errno = EFBIG
        self.limit = limit
    }
    /// A FIFO, socket or device where a file was expected.
    static let notRegular: FileReadError = {
        var error = FileReadError(errno: EINVAL)
        error.notRegular = true
        return error
    }()

    public var isMissing: Bool { errno == ENOENT || errno == ENOTDIR }

    public var description: String {
        if notRegular { return "not a regular file (a FIFO, socket or device cannot be read as one)" }
        if let limit { return "too large (over \(limit / 1_048_576) MB); is it the right file?" }
        return Self.words(for: errno, writing: false)
    }

    /// A system error number in plain words, for reading or for writing.
    public static func words(for errno: Int32, writing: Bool) -> String {
        switch errno {
        case ENOENT, ENOTDIR: writing ? "its folder is missing" : "no such file"
        case EACCES, EPERM: "permission denied (check the file's owner and mode)"
        case EISDIR: "is a folder, not a file"
        case ELOOP: "too many symbolic links"
        case ENOSPC: "no space left on the device that holds it (`df -h` shows how full it is)"
        case EDQUOT: "the disk quota of jukeboxd's user is used up"
        case EROFS: "the file system is mounted read-only"
        case EFBIG: "larger than the file system allows"
        case EIO: "input/output error while \(writing ? "writing" : "reading") (the disk or SD card may be failing)"
        default: "cannot be \(writing ? "written" : "read") (error \(errno))"
        }
    }

    /// Whether giving jukeboxd's user the right to write would help.
    public static func isPermission(_ errno: Int32) -> Bool { errno == EACCES || errno == EPERM }

}
