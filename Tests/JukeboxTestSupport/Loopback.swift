#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// TCP sockets on 127.0.0.1 for tests that play a client or a server by hand. Calls that
/// block (a read that waits) run on a thread of their own, never on the test's cooperative
/// pool, which the code under test needs.
public enum Loopback {
    /// A socket bound to a free loopback port; `listening`: also listening, as a fake server.
    /// Without listening, connecting to the port is refused and no one else can take it.
    public static func bound(listening: Bool = false) -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        if listening { listen(descriptor, 16) }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A port for a server that a test starts, which binds it some time later. It lies below
    /// the kernel's ephemeral range (32768-60999), so no outgoing connection, and no
    /// `bound()`, can take it in the meantime; each call in a process gets another, starting
    /// from a place set by the process id, and a port something already holds is passed over.
    public static func serverPort() -> Int {
        while true {
            let port = nextServerPort.withLock { next -> Int in
                defer { next = next == 32_767 ? 20_000 : next + 1 }
                return next
            }
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.address(port: port)
            let taken = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } != 0
            close(descriptor)
            if !taken { return port }
        }
    }

    private static let nextServerPort = Mutex(20_000 + Int(getpid() % 64) * 192)

    /// A connection to `port` (or -1); `waiting: false` returns before it is made. `from`:
    /// the last byte of the loopback address it comes from (127.0.0.`from`), as another
    /// machine would.
    public static func connect(port: Int, waiting: Bool = true, from: UInt8 = 1) -> Int32 {
        let kind = Int32(SOCK_STREAM.rawValue) | (waiting ? 0 : Int32(SOCK_NONBLOCK.rawValue))
        let descriptor = socket(AF_INET, kind, 0)
        if from != 1 {
            var source = Self.address(port: 0)
            source.sin_addr.s_addr = (UInt32(127) << 24 | UInt32(from)).bigEndian
            _ = withUnsafePointer(to: &source) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
        var address = Self.address(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 || (!waiting && errno == EINPROGRESS) else {
            close(descriptor)
            return -1
        }
        return descriptor
    }

    /// Runs blocking work on a thread of its own (`ThreadTask`) and waits for it. Not on
    /// `DispatchQueue.global()`: its pool has one thread per core, two here, so two blocked
    /// reads there would hold up every other test's blocking work.
    /// Throws `CancellationError` if the test is cancelled meanwhile.
    public static func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws(CancellationError) -> T {
        try await ThreadTask(work).value
    }

    /// Sends `text` to `port` and returns everything read until the server closes, or until
    /// `timeout` seconds pass without a byte ("" when the connection fails).
    public static func request(port: Int, _ text: String, timeout: Int = 10) async throws -> String {
        try await offThePool {
            let descriptor = connect(port: port)
            guard descriptor >= 0 else { return "" }
            defer { close(descriptor) }
            var limit = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { break }
                received += buffer.prefix(count)
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    public static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
