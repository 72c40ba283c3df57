import Glibc
import JukeboxCore
import JukeboxProtocol

/// Sends one JSON-RPC line to a daemon's control socket and reads the answer, from inside the
/// test process: for timing a request without a client process's start-up in the figure.
enum RawControl {
    static func call(_ path: String, _ line: String) -> String? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0, var address = UnixSocketAddress(path) else { return nil }
        defer { close(descriptor) }
        guard address.withSockaddr({ connect(descriptor, $0, $1) }) == 0 else { return nil }
        let request = Array((line + "\n").utf8)
        guard request.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == request.count else { return nil }
        var reply: [UInt8] = []
        var byte: UInt8 = 0
        while read(descriptor, &byte, 1) == 1, byte != UInt8(ascii: "\n") { reply.append(byte) }
        return String(decoding: reply, as: UTF8.self)
    }
}
