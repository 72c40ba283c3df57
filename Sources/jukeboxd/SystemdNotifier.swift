import Glibc
import JukeboxControl
import JukeboxCore

/// Talks to systemd's notification socket (`$NOTIFY_SOCKET`) with plain datagrams, so the
/// unit can be `Type=notify` without linking libsystemd. Does nothing outside systemd.
struct SystemdNotifier: Sendable {
    let path: String?

    init(environment: [String: String] = ProcessEnvironment.current) {
        path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    var isActive: Bool { path != nil }

    /// Never blocks: a notification socket nobody reads fills after a few datagrams, and a
    /// daemon must not stall on its supervisor.
    func send(_ message: String) {
        guard let path else { return }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        // A leading "@" names a socket in the abstract namespace: its first byte is NUL.
        let abstract = path.hasPrefix("@")
        var bytes = Array(path.utf8)
        if abstract { bytes[0] = 0 }
        var address = sockaddr_un()
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let payload = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                payload.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), socketAddress, length) }
            }
        }
    }

    /// Half of `$WATCHDOG_USEC`, as systemd recommends, or nil when no watchdog is set.
    static func watchdogInterval(environment: [String: String] = ProcessEnvironment.current) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 else { return nil }
        return .microseconds(microseconds / 2)
    }
}
