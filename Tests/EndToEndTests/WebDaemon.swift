import JukeboxTestSupport
import Testing

/// How the web remote is served in a test: the HTTP API's tests run over both.
enum WebScheme: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case http, https
    var testDescription: String { rawValue }
}

/// A session of two clips with the web remote on a free loopback port behind a password, for
/// the HTTP API's and the page's tests.
struct WebDaemon {
    /// The certificate authority a test's clients trust: the daemon's own, while `run` runs
    /// one over HTTPS.
    @TaskLocal static var authority: String?

    static let password = "correct horse"
    let folder: TemporaryDirectory
    let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 4000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
    var socket: String { folder.file("c.sock") }
    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }

    let scheme: WebScheme
    /// The authority's certificate, once the daemon has made it.
    var authority: String { folder.file("state.tls/ca.crt") }

    /// `fields`: more session fields, as JSON members (`"cue": "water.wav", `). Without
    /// `password`, the web remote is open, as it may be on 127.0.0.1.
    init(fields: String = "", password: Bool = true, scheme: WebScheme = .http) throws {
        self.scheme = scheme
        folder = try TemporaryDirectory()
        try folder.write("water.wav", tone)
        try folder.write("walk.wav", tone)
        try folder.write("password", text: Self.password + "\n")
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, \(fields)
              "http": { "listen": "127.0.0.1:0", "https": \(scheme == .https)\(password ? #", "passwordFile": "password""# : "") },
              "clips": [ { "file": "water.wav" }, { "file": "walk.wav" } ] }
            """)
    }

    /// Runs the daemon and `body` with the web remote's base URL.
    func run<T: Sendable>(_ body: @Sendable (String, LogLines) async throws -> T) async throws -> T {
        try await DaemonProcess.withDaemon(arguments, ready: "web remote listening on") { log in
            let line = await log.lines.first { $0.contains("web remote listening on") } ?? ""
            let port = line.split(separator: "(port ").last.map { String($0.dropLast()) } ?? ""
            return try await Self.$authority.withValue(scheme == .https ? authority : nil) {
                try await body("\(scheme)://127.0.0.1:\(port)", log)
            }
        }.result
    }
}
