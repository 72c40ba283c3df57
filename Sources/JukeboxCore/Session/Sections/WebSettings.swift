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

// The session's section: its reader, its checks and its messages.
extension SessionReader {
    static let webKeys = ["listen", "passwordFile", "https", "certificate", "key"]

    /// `http: {"listen": "0.0.0.0:8080", "passwordFile": "/etc/jukeboxd/web-password",
    /// "https": true, "certificate": "…", "key": "…"}`.
    mutating func web(_ value: JSONValue, sessionDirectory: String) -> WebSettings? {
        guard let fields = object(value, at: "http", allowed: Self.webKeys) else { return nil }
        func path(_ key: String) -> String? {
            fields[key].flatMap { nonEmptyString($0, at: "http.\(key)") }.map { FilePath.normalize(FilePath.join(sessionDirectory, $0)) }
        }
        let passwordFile = path("passwordFile")
        guard let listenValue = fields["listen"] else {
            problem("http.listen", "missing (expected HOST:PORT, such as \"0.0.0.0:8080\")")
            return nil
        }
        guard case .string(let listen) = listenValue, var settings = WebSettings(listen: listen, passwordFile: passwordFile) else {
            problem("http.listen", "\(listenValue.shortDescription) is not HOST:PORT (such as \"0.0.0.0:8080\" or \"127.0.0.1:8080\")")
            return nil
        }
        switch fields["https"] {
        case nil: break
        case .bool(let https)?: settings.https = https
        case let other?: problem("http.https", "\(other.shortDescription) is not true or false (true: HTTPS, the default; false: plain HTTP)")
        }
        settings.certificateFile = path("certificate")
        settings.keyFile = path("key")
        if (settings.certificateFile == nil) != (settings.keyFile == nil) {
            problem(settings.certificateFile == nil ? "http.key" : "http.certificate", "needs http.\(settings.certificateFile == nil ? "certificate" : "key") too: give both your certificate and its key, or neither (jukeboxd then makes its own)")
        } else if settings.certificateFile != nil, !settings.https {
            problem("http.certificate", "is for HTTPS, but http.https is false: leave out the certificate and key, or set https to true")
        }
        return settings
    }
}
