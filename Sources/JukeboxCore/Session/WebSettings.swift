import Glibc

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

    /// Only this machine can connect: no password is needed. Decided by the address the
    /// listener is bound to, so only by an address written as one (127.0.0.0/8 or ::1) or
    /// `localhost`: a name such as `127.jukebox.lan` can stand for any address.
    public var isLoopback: Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
    }

    public var listen: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `https` or `http`.
    public var scheme: String { https ? "https" : "http" }
}
