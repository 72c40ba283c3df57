#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Replaces a file whole and durably: the new content goes to a temporary file beside it,
/// which is fsynced and renamed over the old one, and then the folder is fsynced. After a
/// crash the file is either the old version or the new one, never a mix. Used for the state
/// file and for session files edited through the API.
public enum AtomicFile {
    /// Writes through `body` (given the open descriptor and the temporary path) and puts the
    /// result in place of `path`. Returns what `body` returns.
    public static func replace<T>(_ path: String, mode: mode_t, _ body: (Int32, String) throws -> T) throws -> T {
        let temporary = temporaryPath(for: path)
        // A new file, never one already there: O_EXCL with O_NOFOLLOW refuses a symlink (or
        // anything else) planted under the temporary name instead of writing through it. One
        // left by a crash is removed (unlink removes a symlink, not its target) and the
        // create tried once more.
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        var descriptor = open(temporary, flags, mode)
        if descriptor < 0, errno == EEXIST, unlink(temporary) == 0 { descriptor = open(temporary, flags, mode) }
        guard descriptor >= 0 else { throw FileWriteError(path: temporary, errno: errno) }
        let result: T
        do {
            result = try body(descriptor, temporary)
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        guard fsync(descriptor) == 0 else {
            let error = errno
            close(descriptor)
            unlink(temporary)
            throw FileWriteError(path: temporary, errno: error)
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let error = errno
            unlink(temporary)
            throw FileWriteError(path: path, errno: error)
        }
        let directory = open(FilePath.directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
        return result
    }

    /// Where `path`'s new content is written before it replaces it: `.NAME.tmp` beside it. A
    /// leading dot keeps it apart from every name a clip can be stored under (an upload's
    /// name never starts with one, `ClipUpload.safeName`), since a leftover under this name
    /// is removed before the write.
    static func temporaryPath(for path: String) -> String { hiddenSibling(of: path, suffix: ".tmp") }

    /// `.NAME` + `suffix` in `path`'s folder: jukeboxd's own files beside a file it keeps.
    public static func hiddenSibling(of path: String, suffix: String) -> String {
        let name = ".\(FilePath.lastComponent(path))\(suffix)"
        return path.contains("/") ? FilePath.join(FilePath.directory(of: path), name) : name
    }

    /// Puts `bytes` in place of `path`.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
        try replace(path, mode: mode) { descriptor, temporary in
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw FileWriteError(path: temporary, errno: errno)
                }
                offset += written
            }
        }
    }
}
