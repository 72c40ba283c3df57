#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Unix domain socket address for a path, or for a name in the abstract namespace when the
/// path starts with "@" (as systemd's `$NOTIFY_SOCKET` may). Nil when the path does not fit.
public struct UnixSocketAddress {
    private var storage = sockaddr_un()
    private let length: socklen_t

    public init?(_ path: String) {
        var bytes = Array(path.utf8)
        let abstract = path.hasPrefix("@")
        if abstract { bytes[0] = 0 }
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: storage.sun_path) else { return nil }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: bytes) }
        // An abstract name is exactly its bytes; a path is NUL-terminated (the rest is zero).
        length = abstract
            ? socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
            : socklen_t(MemoryLayout<sockaddr_un>.size)
    }

    public mutating func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        let length = self.length
        return withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
