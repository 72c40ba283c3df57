import Glibc
import JukeboxCore
import JukeboxDispatch
import JukeboxProtocol

/// Why the control socket could not be set up; `exitCode` follows sysexits.
public struct ControlSocketError: StartFailure, Sendable {
    public var message: String
    public var exitCode: Int32
    public var description: String { message }
}

/// Preparing the socket path: a live daemon already there is an error, a stale socket file
/// from a daemon that died is removed, and the folder is created if it is missing.
public enum SocketFile {
    /// True when something accepts connections on `path`.
    public static func isLive(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard var address = UnixSocketAddress(path) else { return false }
        return address.withSockaddr { connect(descriptor, $0, $1) } == 0
    }

    /// Checks `path` and makes its folder if it is missing; returns that folder if it was
    /// made here, so the daemon removes it when it stops (`removeFolder`), as it removes the
    /// socket, and leaves the machine as it found it.
    @discardableResult
    public static func prepare(_ path: String) throws(ControlSocketError) -> String? {
        _ = try fileAddress(path)
        if isLive(path) {
            throw ControlSocketError(message: "another jukeboxd is already running on \(path); stop it first, or give this one its own --socket (and its own --state)", exitCode: 75)
        }
        try removeStale(path)
        let folder = FilePath.directory(of: path)
        let uid = UInt32(geteuid())
        let isPrivate = folder == SocketPath.privateFolder(uid: uid)
        var made: String?
        if !FilePath.isDirectory(folder) {
            if mkdir(folder, isPrivate ? 0o700 : 0o755) == 0 {
                made = folder
            } else if errno != EEXIST {
                throw ControlSocketError(message: "cannot create the socket folder \(folder): \(FileReadError(errno: errno))", exitCode: 73)
            }
        }
        if isPrivate, let problem = SocketPath.checkPrivateFolder(folder, uid: uid) {
            throw ControlSocketError(message: "refusing the control socket folder: \(problem); remove it, or give --socket elsewhere", exitCode: 77)
        }
        return made
    }

    /// The address of the socket file at `path`: a path short enough for a Unix socket, and
    /// not an abstract name (`@…`), which has no file to give a mode or a group.
    static func fileAddress(_ path: String) throws(ControlSocketError) -> UnixSocketAddress {
        guard let address = UnixSocketAddress(path), !path.hasPrefix("@") else {
            throw ControlSocketError(message: "control socket path \"\(path)\" is not a file path of at most 107 bytes; choose another --socket", exitCode: 64)
        }
        return address
    }

    /// Removes the socket file a daemon that died left at `path`; anything else there is an
    /// error, and is left alone.
    public static func removeStale(_ path: String) throws(ControlSocketError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw ControlSocketError(message: "\(path) exists and is not a socket; remove it or choose another --socket", exitCode: 73)
        }
        if unlink(path) != 0, errno != ENOENT {
            throw ControlSocketError(message: "cannot remove the old socket file \(path): \(FileReadError(errno: errno)); remove it, or choose another --socket", exitCode: 73)
        }
    }

    /// Removes a folder `prepare` made, once the socket in it is gone; one that holds
    /// anything else stays.
    public static func removeFolder(_ folder: String) { rmdir(folder) }

    /// Makes the listening socket file at `path`, open to its owner alone from the moment it
    /// exists, so it is never connectable by anyone else, not even between its creation and
    /// the `restrict` that follows (under a umask of 000 it would otherwise be open to all for
    /// that moment). On Linux the file `bind` makes takes the socket's own mode, less the
    /// umask, so the socket is given mode 0600 first: the process's umask, which every thread
    /// shares, is never changed. Returns the bound descriptor, for the server to listen on.
    public static func bindPrivately(_ path: String) throws(ControlSocketError) -> CInt {
        var address = try fileAddress(path)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw ControlSocketError(message: "cannot make the control socket \(path): \(FileReadError(errno: errno))", exitCode: 71)
        }
        guard fchmod(descriptor, 0o600) == 0, address.withSockaddr({ bind(descriptor, $0, $1) }) == 0 else {
            let failure = errno
            close(descriptor)
            throw ControlSocketError(
                message: failure == EADDRINUSE
                    ? "cannot make the control socket \(path): something else made that file meanwhile; remove it, or choose another --socket"
                    : "cannot make the control socket \(path): \(FileReadError(errno: failure))", exitCode: 73)
        }
        return descriptor
    }

    /// The id of the group named by `--socket-group`; checked at start-up too, so a misspelt
    /// name stops the daemon before it restores its queue or touches the device.
    public static func groupID(_ group: String) throws(ControlSocketError) -> gid_t {
        guard let entry = getgrnam(group) else {
            throw ControlSocketError(message: "--socket-group: no group named \"\(group)\" (see `getent group`)", exitCode: 67)
        }
        return entry.pointee.gr_gid
    }

    /// Owner and group may connect; nobody else (never world-writable).
    public static func restrict(_ path: String, group: String?) throws(ControlSocketError) {
        if let group {
            if chown(path, uid_t.max, try groupID(group)) != 0 {
                throw ControlSocketError(message: "cannot give \(path) to group \"\(group)\": \(FileReadError(errno: errno))", exitCode: 77)
            }
        }
        // Binding made it 0600 (see `bindPrivately`); without 0660 the group would be
        // refused, so a failure here stops the start rather than leaving it unusable.
        if chmod(path, 0o660) != 0 {
            throw ControlSocketError(message: "cannot set the mode of \(path) to 0660: \(FileReadError(errno: errno))", exitCode: 77)
        }
    }
}
