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
}
