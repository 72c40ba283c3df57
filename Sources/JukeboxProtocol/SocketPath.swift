#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JukeboxFiles

/// Where the control socket lives; `jukeboxd` and `jukebox` resolve it the same way:
/// `--socket`, else `$JUKEBOX_SOCKET`, else `$XDG_RUNTIME_DIR/jukeboxd.sock`, else
/// `/run/jukeboxd/jukeboxd.sock` for root, else `/tmp/jukeboxd-$UID/jukeboxd.sock`.
///
/// The last one is in a shared folder, so it lives in a private folder of its own (mode
/// 0700) that both programs check before use (`checkPrivateFolder`): another user cannot
/// squat the name, listen in the daemon's place and answer the client's commands.
public enum SocketPath {
    /// Where the system service (dist/jukeboxd.service) puts its socket.
    public static let system = "/run/jukeboxd/jukeboxd.sock"

    public static func resolve(explicit: String?, environment: [String: String], uid: UInt32 = getuid()) -> String {
        resolve(explicit: explicit, variable: { environment[$0] }, uid: uid)
    }

    /// `variable` reads one environment variable (by default the process's own, by `getenv`:
    /// the client starts fastest without copying its whole environment).
    public static func resolve(explicit: String?, variable: (String) -> String? = ProcessEnvironment.variable, uid: UInt32 = getuid()) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let path = variable("JUKEBOX_SOCKET"), !path.isEmpty { return path }
        if let runtime = variable("XDG_RUNTIME_DIR"), !runtime.isEmpty { return runtime.hasSuffix("/") ? runtime + "jukeboxd.sock" : runtime + "/jukeboxd.sock" }
        return uid == 0 ? system : privateFolder(uid: uid) + "/jukeboxd.sock"
    }

    /// The folder of the fallback socket in /tmp.
    public static func privateFolder(uid: UInt32) -> String { "/tmp/jukeboxd-\(uid)" }

    /// What is wrong with `folder` as the private home of a socket of user `uid`: it must be
    /// a real folder (not a symlink), belong to that user, and be writable by nobody else.
    /// nil when it is fine, or when it does not exist yet.
    public static func checkPrivateFolder(_ folder: String, uid: UInt32) -> String? {
        var info = stat()
        guard lstat(folder, &info) == 0 else { return nil }
        if (info.st_mode & S_IFMT) == S_IFLNK { return "\(folder) is a symbolic link, not a folder of your own" }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return "\(folder) is not a folder" }
        if info.st_uid != uid { return "\(folder) belongs to \(UserName.of(info.st_uid)), not to \(UserName.of(uid))" }
        if info.st_mode & 0o022 != 0 { return "\(folder) is writable by others (mode \(String(info.st_mode & 0o777, radix: 8)))" }
        return nil
    }

    /// The client's choice: as `resolve`, except that when nothing was configured and no
    /// daemon of this user's is listening, the system service's socket is used if it exists,
    /// so `jukebox status` works for any member of the socket's group.
    public static func resolveForClient(explicit: String?, environment: [String: String], uid: UInt32 = getuid()) -> String {
        resolveForClient(explicit: explicit, variable: { environment[$0] }, uid: uid)
    }

    public static func resolveForClient(explicit: String?, variable: (String) -> String? = ProcessEnvironment.variable, uid: UInt32 = getuid()) -> String {
        let path = resolve(explicit: explicit, variable: variable, uid: uid)
        let configured = explicit != nil || variable("JUKEBOX_SOCKET").map { !$0.isEmpty } == true
        var info = stat()
        guard !configured, stat(path, &info) != 0 else { return path }
        // The system service's socket, also when its folder cannot be searched: the user is
        // then told that the socket exists and how to join its group, not that some other
        // path of theirs has no daemon.
        if stat(system, &info) == 0 || errno == EACCES { return system }
        return path
    }
}

/// The process environment without Foundation.
public enum ProcessEnvironment {
    /// One variable, or nil when it is not set.
    public static func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    public static var current: [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
