import Glibc
import JukeboxCore
import JukeboxProtocol
import JukeboxTestSupport

/// Sends one JSON-RPC line to a daemon's control socket and reads the answer, from inside the
/// test process: for timing a request without a client process's start-up in the figure.
/// It waits on a thread of its own: an answer can take a while (9 000 clips enqueued), and the
/// test process's cooperative pool has two threads, which the other tests need meanwhile.
enum RawControl {
    static func call(_ path: String, _ line: String) async -> String? {
        (try? await Loopback.offThePool { exchange(path, line) }) ?? nil
    }

    static func exchange(_ path: String, _ line: String) -> String? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0, var address = UnixSocketAddress(path) else { return nil }
        defer { close(descriptor) }
        guard address.withSockaddr({ connect(descriptor, $0, $1) }) == 0 else { return nil }
        let request = Array((line + "\n").utf8)
        guard request.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == request.count else { return nil }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { break }
            reply += chunk.prefix(count)
            if chunk.prefix(count).contains(UInt8(ascii: "\n")) { break }
        }
        return String(decoding: reply.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }
}
