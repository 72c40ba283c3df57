import FoundationEssentials
import Glibc
import JukeboxFiles
import JukeboxProtocol

/// Why a command failed, with the exit status it ends with (sysexits where one fits).
struct ClientError: Error, CustomStringConvertible {
    var message: String
    var exitCode: Int32
    /// The daemon's own error, when it refused the request: `--json` prints it for scripts.
    var refusal: RPCError?
    var description: String { message }
}

/// One connection to jukeboxd's control socket, speaking JSON-RPC 2.0 one line at a time.
/// The client is its own short-lived process, so plain blocking socket calls are the
/// simplest and fastest way to talk.
final class ControlClient {
    let path: String
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var nextID: Int64 = 1

    init(path: String, timeoutSeconds: Int = 10) throws(ClientError) {
        self.path = path
        let folder = Self.folder(of: path)
        let uid = getuid()
        if folder == SocketPath.privateFolder(uid: uid), let problem = SocketPath.checkPrivateFolder(folder, uid: uid) {
            throw ClientError(message: "jukebox: refusing the socket \(path): \(problem); someone else may be listening there", exitCode: 77)
        }
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Self.unreachable(path, errno) }
        guard var address = UnixSocketAddress(path) else {
            close(descriptor)
            throw ClientError(message: "jukebox: socket path \(path) is too long", exitCode: 64)
        }
        let connected = address.withSockaddr { connect(descriptor, $0, $1) }
        guard connected == 0 else {
            let error = errno
            close(descriptor)
            throw Self.unreachable(path, error)
        }
        // Whoever listens must be root, this user, or the owner of the socket's folder (the
        // system service's user): not someone who got to an open folder first.
        // struct ucred is pid, uid, gid: three 32-bit fields (Glibc hides it behind _GNU_SOURCE).
        var credentials = [UInt32](repeating: 0, count: 3)
        var size = socklen_t(3 * MemoryLayout<UInt32>.size)
        var folderInfo = stat()
        let owner = stat(folder, &folderInfo) == 0 ? folderInfo.st_uid : uid
        let known = credentials.withUnsafeMutableBytes { getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, $0.baseAddress, &size) } == 0
        let peer = known ? credentials[1] : uid
        if peer != 0, peer != uid, peer != owner {
            close(descriptor)
            throw ClientError(
                message: "jukebox: refusing the socket \(path): it is served by \(UserName.of(peer)), who is neither you, root nor the owner of \(folder) (\(UserName.of(owner)))",
                exitCode: 77)
        }
        if timeoutSeconds > 0 {
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    deinit { close(descriptor) }

    /// The name of the group that owns `path`, if it can be read.
    static func groupOwning(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, let group = getgrgid(info.st_gid), let name = group.pointee.gr_name else { return nil }
        return String(cString: name)
    }

    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func unreachable(_ path: String, _ error: Int32) -> ClientError {
        let folder = folder(of: path)
        var info = stat()
        let kind = stat(path, &info) == 0 ? info.st_mode & S_IFMT : 0
        let reason = switch error {
        case ENOENT: "no such socket (is it running?)"
        case ECONNREFUSED where kind != 0 && kind != S_IFSOCK:
            "\(kind == S_IFDIR ? "it is a folder" : "it is a file"), not a socket: give --socket the path jukeboxd logs as \"control socket listening on …\""
        case ECONNREFUSED: "nothing is listening on that socket (is jukeboxd running? it removes its socket when it stops)"
        case _ where (error == EACCES || error == EPERM) && access(folder, X_OK) != 0:
            "permission denied: the folder \(folder) is open only to \(groupOwning(folder).map { "the \"\($0)\" group" } ?? "its group"); "
                + "join it with `sudo usermod -aG \(groupOwning(folder) ?? "GROUP") $USER`, then log out and in again"
        case EACCES, EPERM:
            "permission denied: the socket is open only to \(groupOwning(path).map { "the \"\($0)\" group" } ?? "its group"); "
                + "join it with `sudo usermod -aG \(groupOwning(path) ?? "GROUP") $USER`, then log out and in again"
        default: "error \(error) (is it running?)"
        }
        return ClientError(message: "jukebox: cannot reach jukeboxd at \(path): \(reason)", exitCode: 69)
    }

    /// Sends one request and returns its result, and the reply's line, or throws the
    /// daemon's error. The request is written by hand (`JSONValue.text`) and the reply parsed
    /// by `JSONParser`: the first use of `JSONEncoder` or `JSONDecoder` costs more than the
    /// round trip to jukeboxd (the runtime looks up each generic type it instantiates;
    /// BENCHMARKS.md), so the commonest results are read without them (`JSONReadable`).
    func call<Result: JSONReadable>(_ method: String, _ params: [String: JSONValue] = [:], as type: Result.Type) throws(ClientError) -> (Result, [UInt8]) {
        let id = nextID
        nextID += 1
        // The envelope as text: a dictionary literal here would cost the runtime a search of
        // every conformance in the program the first time (String: Hashable, from its name).
        let params = params.isEmpty ? "{}" : JSONValue.object(params).text
        try send(bytes: Array(#"{"id":\#(id),"jsonrpc":"2.0","method":\#(JSONValue.quoted(method)),"params":\#(params)}"#.utf8))
        let unreadable = ClientError(message: "jukebox: jukeboxd sent an answer this client does not understand (are jukebox and jukeboxd from the same build?)", exitCode: 76)
        while true {
            let line = try readLine()
            guard let reply = try? JSONFields(JSONParser.parse(line), "reply") else { throw unreadable }
            guard reply["id"] == .number(Double(id)) else { continue }
            if let refusal = reply["error"] {
                guard let error = try? RPCError(json: refusal) else { throw unreadable }
                // EX_TEMPFAIL for uploads and tests that may be sent again soon (and for a
                // daemon stopping); EX_NOPERM for a device a client may not open;
                // EX_UNAVAILABLE for a device that did not play the test tone.
                let exitCode: Int32 = switch error.data.reason {
                case "uploads-busy", "test-busy", "stopping": 75
                case "device-refused": 77
                default: error.code == -32014 ? 69 : 1
                }
                throw ClientError(message: "jukebox: \(error.message)", exitCode: exitCode, refusal: error)
            }
            guard let result = reply["result"] else {
                throw ClientError(message: "jukebox: jukeboxd sent an empty answer (are jukebox and jukeboxd from the same build?)", exitCode: 76)
            }
            do {
                return (try Result(json: result), line)
            } catch {
                throw unreadable
            }
        }
    }

    /// Sends one request line (`bytes`, without its newline).
    func send(bytes: [UInt8]) throws(ClientError) {
        var bytes = bytes
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            guard written > 0 else { throw ClientError(message: "jukebox: jukeboxd at \(path) closed the connection", exitCode: 69) }
            offset += written
        }
    }

    /// Sends the file at `path` as an upload (`upload`, then its bytes); returns the upload's
    /// id for `addClip`. The file is read and sent in pieces, never whole.
    func upload(_ path: String) throws(ClientError) -> String {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { throw ClientError(message: "jukebox: cannot read \(path): \(String(cString: strerror(errno)))", exitCode: 66) }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw ClientError(message: "jukebox: \(path) is not a regular file", exitCode: 66)
        }
        let size = Int(info.st_size)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let (accepted, _) = try call("upload", ["name": .string(name), "size": .number(Double(size))], as: UploadResult.self)
        var chunk = [UInt8](repeating: 0, count: 1 << 18)
        var sent = 0
        while sent < size {
            let count = chunk.withUnsafeMutableBytes { read(file, $0.baseAddress, min($0.count, size - sent)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw ClientError(message: "jukebox: \(path) changed while it was being sent", exitCode: 74) }
            var offset = 0
            while offset < count {
                let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, count - offset) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw ClientError(message: "jukebox: jukeboxd at \(self.path) closed the connection during the upload", exitCode: 69) }
                offset += written
            }
            sent += count
        }
        return accepted.upload
    }

    /// The next line from the daemon, without its newline.
    func readLine() throws(ClientError) -> [UInt8] {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer += chunk[..<count]
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                throw ClientError(message: "jukebox: jukeboxd at \(path) did not answer in time", exitCode: 75)
            } else if count < 0, errno == EINTR {
                continue
            } else {
                throw ClientError(message: "jukebox: jukeboxd at \(path) closed the connection", exitCode: 69)
            }
        }
    }
}

/// A notification (`watch`): an event, as `method` and its `params`.
struct Notification {
    var method: String
    var params: EventParams?

    /// Nil unless `line` is a notification.
    init?(_ line: [UInt8]) {
        guard let fields = try? JSONFields(JSONParser.parse(line), "notification"), let method = try? fields.string("method") else { return nil }
        self.method = method
        params = fields["params"].flatMap { try? EventParams(json: $0) }
    }
}
