import Foundation
import JukeboxTestSupport
import Subprocess
import Testing

/// HTTPS as the daemon serves it, seen from curl and openssl: a client that does not trust
/// the daemon's authority is refused by TLS itself; plain HTTP on the same port is sent to
/// HTTPS, except for the authority's certificate; `jukebox web-ca` names the file and its
/// fingerprint; the session cookie is `Secure`.
@Suite("HTTPS", .timeLimit(.minutes(2)))
struct WebHTTPSTests {
    let web: WebDaemon
    init() throws { web = try WebDaemon(scheme: .https) }

    static func port(_ base: String) -> UInt16 { UInt16(base.split(separator: ":").last ?? "") ?? 0 }

    @Test func aClientThatDoesNotTrustTheAuthorityIsRefusedByTLS() async throws {
        try await web.run { base, log in
            // curl with the system's authorities only: the handshake fails (curl's 60: the
            // certificate cannot be verified), and no HTTP answer comes.
            let untrusted = try await Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "\(base)/"])
            #expect(untrusted.status == 60, "curl exit \(untrusted.status)")
            #expect(untrusted.stdout == "000")
            let trusted = try await Tool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", web.authority, "\(base)/"])
            #expect(trusted.status == 0 && trusted.stdout == "200")
            // openssl sees the chain the daemon serves verified against the authority, for the
            // address it was asked by.
            let handshake = try await Tool.run("sh", ["-c", #"openssl s_client -connect 127.0.0.1:"$1" -CAfile "$2" -verify_return_error -verify_ip 127.0.0.1 </dev/null"#, "sh", "\(Self.port(base))", web.authority])
            #expect(handshake.stdout.contains("Verify return code: 0 (ok)"), "\(handshake.stdout.suffix(500))")
            #expect(handshake.stdout.contains("Protocol: TLSv1.3") || handshake.stdout.contains("TLSv1.3"), "TLS 1.3")
            let lines = await log.lines
            #expect(lines.allSatisfy { !$0.contains(" error ") }, "\(lines)")
        }
    }

    @Test func plainHTTPIsSentToHTTPSExceptTheAuthoritysCertificate() async throws {
        try await web.run { base, _ in
            let plain = "http://127.0.0.1:\(Self.port(base))"
            let moved = try await WebAPITests.curl(["\(plain)/clips?x=1"])
            #expect(moved.status == 301)
            #expect(moved.headers["location"] == "https://127.0.0.1:\(Self.port(base))/clips?x=1")
            // Followed, it arrives at the page over HTTPS.
            let followed = try await WebAPITests.curl(["-L", "--cacert", web.authority, "\(plain)/"])
            #expect(followed.body.contains("<title>"), "\(followed.body.prefix(200))")
            // The authority's certificate, over plain HTTP and over HTTPS, is the file.
            let file = try String(contentsOfFile: web.authority, encoding: .utf8)
            for url in ["\(plain)/ca.crt", "\(base)/ca.crt"] {
                let certificate = try await WebAPITests.curl([url])
                #expect(certificate.status == 200, "\(url)")
                #expect(certificate.headers["content-type"] == "application/x-x509-ca-cert", "\(url)")
                #expect(certificate.body == file, "\(url)")
            }
            // A name this loopback-only remote does not answer to is refused, not redirected.
            let rebound = try await WebAPITests.curl(["-H", "Host: attacker.example", "\(plain)/"])
            #expect(rebound.status == 421)
        }
    }

    /// A plain request's head is read up to 8 KiB: at the limit it is answered, over it refused.
    @Test func aPlainRequestsHeadIsLimitedTo8KiB() async throws {
        try await web.run { base, _ in
            let port = Self.port(base)
            func answer(headSize: Int) async -> String {
                let start = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: "
                let pad = String(repeating: "a", count: headSize - start.utf8.count - 4)
                guard let client = EventStreamClient(port: port, raw: start + pad + "\r\n\r\n") else { return "no connection" }
                defer { client.close() }
                return await client.read(until: "\r\n\r\n")
            }
            #expect(await answer(headSize: 8191).hasPrefix("HTTP/1.1 301"))
            #expect(await answer(headSize: 8192).hasPrefix("HTTP/1.1 301"))
            #expect(await answer(headSize: 8193).hasPrefix("HTTP/1.1 400"))
        }
    }

    @Test func webCANamesTheFileAndItsFingerprint() async throws {
        try await web.run { _, _ in
            let result = try await DaemonProcess.run(["--socket", web.socket, "web-ca"], tool: "jukebox")
            #expect(result.status == 0)
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == web.authority)
            let fingerprint = try await Tool.run("openssl", ["x509", "-noout", "-fingerprint", "-sha256", "-in", web.authority])
            #expect(lines.dropFirst().first == "SHA-256 " + fingerprint.stdout.split(separator: "=").last!.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(result.stdout.contains("server certificate for ") && result.stdout.contains("127.0.0.1"), "\(result.stdout)")
        }
        // Plain HTTP has no authority: said in words, exit 1.
        let plain = try WebDaemon(scheme: .http)
        try await plain.run { _, _ in
            let result = try await DaemonProcess.run(["--socket", plain.socket, "web-ca"], tool: "jukebox")
            #expect(result.status == 1)
            #expect(result.stderr.contains("the web remote serves plain HTTP (the session's http.https is false), so it has no certificate authority"), "\(result.stderr)")
        }
    }

    @Test(arguments: WebScheme.allCases) func theSessionCookieIsSecureOverHTTPS(_ scheme: WebScheme) async throws {
        let web = try WebDaemon(scheme: scheme)
        try await web.run { base, _ in
            let login = try await WebAPITests.curl(["-X", "POST", "\(base)/login", "--data", "password=correct+horse"])
            #expect(login.status == 204)
            let cookie = login.headers["set-cookie"] ?? ""
            #expect(cookie.hasSuffix("; Secure; Max-Age=2592000") == (scheme == .https), "\(cookie)")
            #expect(cookie.contains("HttpOnly; SameSite=Strict; Path=/"))
        }
    }

    /// A damaged `ca.key` made the next start write a new authority over the old key, with one
    /// notice-level line. The damaged files are now kept aside, the log warns, and
    /// `jukebox web-ca` says the phones need the new authority; files that were readable by
    /// others are made private again.
    @Test func aDamagedAuthorityIsKeptAsideAndThePhonesAreTold() async throws {
        try await web.run { _, _ in }
        let folder = web.folder.file("state.tls")
        let oldCertificate = try web.folder.read("state.tls/ca.crt")
        try web.folder.write("state.tls/ca.key", Array("-----BEGIN PRIVATE KEY-----\ngarbled\n".utf8))
        chmod(folder + "/server.key", 0o644)
        let run = try await DaemonProcess.withDaemon(web.arguments, ready: "web remote listening on") { [web] _ in
            try await DaemonProcess.run(["--socket", web.socket, "web-ca"], tool: "jukebox")
        }
        let (lines, shown) = (run.lines, run.result)
        let warning = try #require(lines.first { $0.contains("certificate authority could not be used") }, "\(lines)")
        #expect(warning.contains(" warning ") && warning.contains("ca.key is not a P-256 private key in PEM form"), "\(warning)")
        #expect(warning.contains("every phone must trust the new one"), "\(warning)")
        let aside = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".corrupt-") }.sorted()
        #expect(aside.count == 2 && aside[0].hasPrefix("ca.crt.corrupt-") && aside[1].hasPrefix("ca.key.corrupt-"), "\(aside)")
        #expect(try web.folder.read("state.tls/\(aside[0])") == oldCertificate, "the old authority is kept as it was")
        #expect(try web.folder.read("state.tls/ca.crt") != oldCertificate, "a new one was made")
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("note: it replaced one that could not be used") && shown.stdout.contains("every phone must trust this one"), "\(shown.stdout)")
        var mode = stat()
        stat(folder + "/server.key", &mode)
        #expect(mode.st_mode & 0o777 == 0o600)
    }

    /// A key that is not the certificate's, a certificate file that is not there, and a
    /// `state.tls` that is not a folder exited 1; they exit 73 (EX_CANTCREAT) with the path.
    @Test func certificateProblemsExit73AndNameThePath() async throws {
        let own = try TemporaryDirectory()
        try await Self.makeCertificate(in: own, name: "a", days: ("20200101000000Z", "20991231000000Z"))
        try await Self.makeCertificate(in: own, name: "b", days: ("20200101000000Z", "20991231000000Z"))
        func start(_ http: String) async throws -> DaemonProcess.Outcome {
            try web.folder.write("own.json", text: """
                { "interval": { "min": "1h", "max": "1h" }, "http": { "listen": "127.0.0.1:0", "passwordFile": "password"\(http) }, "clips": [ { "file": "water.wav" } ] }
                """)
            return try await DaemonProcess.run([web.folder.file("own.json"), "--socket", web.socket, "--state", web.folder.file("own-state.json"), "--device", "null"])
        }
        let mismatched = try await start(#", "certificate": "\#(own.file("a.crt"))", "key": "\#(own.file("b.key"))""#)
        #expect(mismatched.status == 73, "\(mismatched)")
        #expect(mismatched.stderr.contains("\(own.file("b.key")) is not the key of the certificate in \(own.file("a.crt"))"), "\(mismatched.stderr)")
        let missing = try await start(#", "certificate": "\#(own.file("none.crt"))", "key": "\#(own.file("a.key"))""#)
        #expect(missing.status == 73, "\(missing)")
        #expect(missing.stderr.contains("cannot read \(own.file("none.crt"))"), "\(missing.stderr)")
        try web.folder.write("own-state.tls", text: "not a folder")
        let notFolder = try await start("")
        #expect(notFolder.status == 73, "\(notFolder)")
        #expect(notFolder.stderr.contains("\(web.folder.file("own-state.tls")) is not a folder"), "\(notFolder.stderr)")
        for outcome in [mismatched, missing, notFolder] { #expect(!outcome.stderr.contains("Error:"), "\(outcome.stderr)") }
    }

    /// A certificate of one's own that has ended was served with no word. The start warns
    /// with its end date, and `jukebox web-ca` says it.
    @Test func anEndedCertificateOfOnesOwnIsWarnedOf() async throws {
        let own = try TemporaryDirectory()
        try await Self.makeCertificate(in: own, name: "old", days: ("20200101000000Z", "20200201000000Z"))
        try web.folder.write("own.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "http": { "listen": "127.0.0.1:0", "passwordFile": "password", "certificate": "\(own.file("old.crt"))", "key": "\(own.file("old.key"))" }, "clips": [ { "file": "water.wav" } ] }
            """)
        let arguments = [web.folder.file("own.json"), "--socket", web.socket, "--state", web.folder.file("own-state.json"), "--device", "null"]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "web remote listening on") { [web] _ in
            try await DaemonProcess.run(["--socket", web.socket, "web-ca"], tool: "jukebox")
        }
        let (lines, shown) = (run.lines, run.result)
        #expect(lines.contains { $0.contains(" warning ") && $0.contains("the web remote's certificate \(own.file("old.crt")) ended on 2020-02-01: browsers refuse it") }, "\(lines)")
        #expect(shown.status == 1)
        #expect(shown.stderr.contains("\(own.file("old.crt")), which ended on 2020-02-01: browsers refuse it"), "\(shown.stderr)")
    }

    /// A self-signed P-256 certificate for localhost and 127.0.0.1, `NAME.crt` and `NAME.key`,
    /// valid between the two times given (`openssl ca`, which can date one in the past).
    static func makeCertificate(in folder: TemporaryDirectory, name: String, days: (String, String)) async throws {
        try folder.write("index.txt", text: "")
        try folder.write("serial", text: "01\n")
        try folder.write("ca.cnf", text: "[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\nnew_certs_dir=.\nserial=serial\ndefault_md=sha256\npolicy=p\n[p]\ncommonName=supplied\n")
        try folder.write("ext", text: "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        let script = """
            cd "$1" && openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$2.key" -out "$2.csr" -subj /CN=localhost \
              && openssl ca -batch -config ca.cnf -selfsign -keyfile "$2.key" -in "$2.csr" -out "$2.crt" -startdate "$3" -enddate "$4" -extfile ext
            """
        let made = try await Tool.run("sh", ["-c", script, "sh", folder.path, name, days.0, days.1])
        #expect(made.status == 0, "\(made.stderr)")
    }
}

