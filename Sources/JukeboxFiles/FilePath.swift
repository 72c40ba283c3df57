#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few path and file operations the daemon needs, on plain strings, so the core does
/// not pull in full Foundation (about 10 MB of resident memory on these machines).
public enum FilePath {
    public static func isAbsolute(_ path: String) -> Bool { path.hasPrefix("/") }

    public static func join(_ base: String, _ path: String) -> String {
        if isAbsolute(path) || base.isEmpty { return path }
        return base.hasSuffix("/") ? base + path : base + "/" + path
    }

    /// The folder holding `path` ("." for a bare file name).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public static func lastComponent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    public static func removingExtension(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    public static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        // CChar is signed on x86_64 and unsigned on arm64: truncating works for both.
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
    }

    /// `path` made absolute against the working directory, with `.` and `..` folded away.
    public static func absolute(_ path: String) -> String {
        normalize(isAbsolute(path) ? path : join(currentDirectory(), path))
    }

    public static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// Whether `path` lies below `folder` (both taken as they are: resolve or normalise first).
    public static func isInside(_ path: String, _ folder: String) -> Bool {
        path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
    }

    /// The real path after following symlinks, or nil if it does not exist.
    public static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// Makes `folder` and any missing parents, each mode 0700 whatever the umask (a folder
    /// made 0600 under a tight umask could not be entered). Existing folders are left as they are.
    public static func makeFolders(_ folder: String) throws(FileWriteError) {
        for current in steps(to: folder) {
            if mkdir(current, 0o700) == 0 {
                chmod(current, 0o700)
            } else if errno != EEXIST {
                throw FileWriteError(path: current, errno: errno)
            }
        }
    }

    /// The folders on the way to `folder`, outermost first, each as `folder` names it: from
    /// the root for an absolute path, from the working folder for a relative one.
    static func steps(to folder: String) -> [String] {
        var steps: [String] = []
        var current = folder.hasPrefix("/") ? "/" : ""
        for part in folder.split(separator: "/") {
            current += (current.isEmpty || current.hasSuffix("/") ? "" : "/") + part
            steps.append(current)
        }
        return steps
    }

    /// Something is at `path` (a file, a folder, a link, even one that leads nowhere).
    /// The names in `folder` (without `.` and `..`); empty when it cannot be read. Blocking:
    /// call it off the cooperative pool.
    public static func names(in folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    public static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Why `path` is not a folder this user can use: nil when it is one, else a few words
    /// ("is not a folder", "cannot be reached by user NAME: permission denied").
    public static func folderProblem(_ path: String) -> String? {
        var info = stat()
        if stat(path, &info) == 0 { return (info.st_mode & S_IFMT) == S_IFDIR ? nil : "is not a folder" }
        if errno == EACCES { return "cannot be reached by \(UserName.of(geteuid())): permission denied on a folder above it" }
        return "is not a folder"
    }

    /// Reads a whole regular file of at most `limit` bytes. Anything else is refused before a
    /// byte is read: a FIFO (which would hang), a device such as /dev/zero (which never ends),
    /// a folder, or a file too large to be what it claims. The error names the problem in
    /// words a user can act on.
    public static func read(_ path: String, limit: Int) throws(FileReadError) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO with no writer must not wait for one.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { throw FileReadError(errno: errno) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileReadError(errno: errno) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw FileReadError(errno: EISDIR)
        default: throw FileReadError.notRegular
        }
        guard Int(info.st_size) <= limit else { throw FileReadError(tooLarge: limit) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileReadError(errno: errno)
            }
            if count == 0 { return bytes }
            // It grew while being read: the limit still holds.
            guard bytes.count + count <= limit else { throw FileReadError(tooLarge: limit) }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// Up to `count` bytes from the start of the file; empty when it cannot be read. For
    /// telling what kind of file something is, however large it is.
    /// The size of the regular file at `path`, or nil.
    /// Renames a file that cannot be used to `PATH.corrupt-SECONDS`, so it is never written
    /// over and can still be looked at; returns the new name.
    public static func keepAside(_ path: String, epochSeconds: Int64) throws(FileReadError) -> String {
        let target = "\(path).corrupt-\(epochSeconds)"
        guard rename(path, target) == 0 else { throw FileReadError(errno: errno) }
        return target
    }

    public static func size(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG ? Int(info.st_size) : nil
    }

    public static func head(_ path: String, count: Int) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        return Array(bytes.prefix(max(read, 0)))
    }
}