/// The web remote (the session's `http` section, or `--http`): where it listens, the file
/// with its password, and whether it serves HTTPS.
public struct WebSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var passwordFile: String?
    /// HTTPS (the default), with a certificate of jukeboxd's own authority unless
    /// `certificateFile` and `keyFile` name one; false: plain HTTP.
    public var https: Bool
    /// A certificate (PEM, the chain after it) and its key of the user's own: from Let's
    /// Encrypt, say. Both or neither.
    public var certificateFile: String?
    public var keyFile: String?

    public init(host: String, port: Int, passwordFile: String? = nil, https: Bool = true, certificateFile: String? = nil, keyFile: String? = nil) {
        self.host = host
        self.port = port
        self.passwordFile = passwordFile
        self.https = https
        self.certificateFile = certificateFile
        self.keyFile = keyFile
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
    public var isLoopback: Bool { Self.isLoopback(host) }

    /// Whether `name` is `localhost` or a loopback address written as one: 127.0.0.0/8 in four
    /// decimal parts, or `::1`. A name that only looks like one, such as `127.jukebox.lan`, can
    /// stand for any address. The listener's address and a request's `Host` are judged alike.
    public static func isLoopback(_ name: String) -> Bool {
        if name == "localhost" || name == "::1" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil && $0.allSatisfy(\.isASCII) }
    }

    public var listen: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `https` or `http`.
    public var scheme: String { https ? "https" : "http" }
}
