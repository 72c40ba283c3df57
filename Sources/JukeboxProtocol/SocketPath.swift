#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the control socket lives; `jukeboxd` and `jukebox` resolve it the same way:
/// `--socket`, else `$JUKEBOX_SOCKET`, else `$XDG_RUNTIME_DIR/jukeboxd.sock`, else
/// `/run/jukeboxd/jukeboxd.sock` for root, else `/tmp/jukeboxd-$UID.sock`.
public enum SocketPath {
    /// Where the system service (dist/jukeboxd.service) puts its socket.
    public static let system = "/run/jukeboxd/jukeboxd.sock"

    public static func resolve(explicit: String?, environment: [String: String] = ProcessEnvironment.current, uid: UInt32 = getuid()) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let path = environment["JUKEBOX_SOCKET"], !path.isEmpty { return path }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime.hasSuffix("/") ? runtime + "jukeboxd.sock" : runtime + "/jukeboxd.sock" }
        return uid == 0 ? system : "/tmp/jukeboxd-\(uid).sock"
    }

    /// The client's choice: as `resolve`, except that when nothing was configured and no
    /// daemon of this user's is listening, the system service's socket is used if it exists,
    /// so `jukebox status` works for any member of the socket's group.
    public static func resolveForClient(explicit: String?, environment: [String: String] = ProcessEnvironment.current, uid: UInt32 = getuid()) -> String {
        let path = resolve(explicit: explicit, environment: environment, uid: uid)
        let configured = explicit != nil || environment["JUKEBOX_SOCKET"].map { !$0.isEmpty } == true
        var info = stat()
        if !configured, stat(path, &info) != 0, stat(system, &info) == 0 { return system }
        return path
    }
}

/// The process environment without Foundation.
public enum ProcessEnvironment {
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
