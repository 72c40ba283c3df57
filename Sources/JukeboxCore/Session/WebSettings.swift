/// The session's `http` section: where the web remote and HTTP API listen, and the file
/// holding their password. Off when absent.
public struct WebSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var passwordFile: String?

    public init(host: String, port: Int, passwordFile: String? = nil) {
        self.host = host
        self.port = port
        self.passwordFile = passwordFile
    }

    /// `HOST:PORT` (`0.0.0.0:8080`, `127.0.0.1:8080`, `[::1]:8080`; port 0 takes any free port,
    /// which the log names); nil when it is not one.
    public init?(listen: String, passwordFile: String? = nil) {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        var host = String(listen[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port, passwordFile: passwordFile)
    }

    /// Only this machine can connect: no password is needed.
    public var isLoopback: Bool { host == "localhost" || host == "::1" || host.hasPrefix("127.") }

    public var listen: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
