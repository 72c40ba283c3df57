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
        return switch errno {
        case ENOENT, ENOTDIR: "no such file"
        case EACCES, EPERM: "permission denied (check the file's owner and mode)"
        case EISDIR: "is a folder, not a file"
        case ELOOP: "too many symbolic links"
        case EIO: "input/output error while reading"
        default: "cannot be read (error \(errno))"
        }
    }

}
