import Glibc
import JukeboxControl
import JukeboxCore
import JukeboxProtocol

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
        guard var address = UnixSocketAddress(path) else { return }
        let payload = Array(message.utf8)
        _ = address.withSockaddr { socketAddress, length in
            payload.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), socketAddress, length) }
        }
    }

    /// Half of `$WATCHDOG_USEC`, as systemd recommends, or nil when no watchdog is set.
    static func watchdogInterval(environment: [String: String] = ProcessEnvironment.current) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 else { return nil }
        return .microseconds(microseconds / 2)
    }
}
