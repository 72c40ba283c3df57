import Foundation
import JukeboxTestSupport
import Subprocess
import Synchronization
import Testing

/// The web remote against a hostile page, a password guesser and a client that hoards
/// connections, with curl and raw sockets against the built daemon.
@Suite("HTTP API against abuse", .timeLimit(.minutes(2)))
struct WebHardeningTests {
    typealias Reply = WebAPITests.Reply
    static let pause = #"{"jsonrpc":"2.0","id":1,"method":"pause"}"#

    static func port(_ base: String) -> UInt16 { UInt16(base.split(separator: ":").last ?? "") ?? 0 }

    /// Several requests in one curl, over one keep-alive connection; their status codes.
    static func statuses(_ arguments: [String], count: Int, url: String) async throws -> [Int] {
        let output = try await Subprocess.run(
            .path("/usr/bin/curl"), arguments: Arguments(["-s", "--max-time", "20", "-w", "%{http_code}\\n"] + arguments + Array(repeating: [url, "-o", "/dev/null"], count: count).flatMap { $0 }),
            platformOptions: TestProcesses.options, input: .none, output: .string(limit: 1 << 16), error: .discarded)
        return output.standardOutput.split(separator: "\n").compactMap { Int($0) }
    }

    /// A Bearer header was never throttled: one connection made 22 570 guesses in 5 s, and a
    /// Bearer request was let in while /login answered 429 to its address.
    @Test func bearerGuessesAreThrottledLikeLoginsAndLoggedOncePerBurst() async throws {
        let web = try WebDaemon()
        try await web.run { base, log in
            let guesses = try await Self.statuses(["-H", "Authorization: Bearer guess", "-X", "POST", "--data-binary", Self.pause], count: 40, url: "\(base)/rpc")
            #expect(guesses.count == 40)
            #expect(guesses.prefix(5).allSatisfy { $0 == 401 } && guesses.dropFirst(5).allSatisfy { $0 == 429 }, "\(guesses)")
            // The scheme in any case, and the right password: still refused for the minute.
            let right = try await WebAPITests.curl(["-H", "Authorization: bearer correct horse", "-X", "POST", "\(base)/rpc", "--data-binary", Self.pause])
            #expect(right.status == 429)
            #expect(Int(right.headers["retry-after"] ?? "") ?? 0 > 0)
            let login = try await WebAPITests.curl(["-X", "POST", "\(base)/login", "--data", "password=correct+horse"])
            #expect(login.status == 429, "a login from that address too")
            let lines = await log.lines.filter { $0.contains("wrong password") }
            #expect(lines.count == 5, "four failures and the throttling, then nothing: \(lines)")
            #expect(lines.last?.contains("5 wrong passwords for the web remote within 60 s from 127.0.0.1, the last through a Bearer header") == true, "\(lines)")
            #expect(await log.lines.allSatisfy { !$0.contains("guess") && !$0.contains("correct horse") }, "passwords are never logged")
        }
    }

    /// `Authorization: bearer` is the same scheme as `Bearer` (RFC 9110), and a body announced
    /// over the limit is refused before it is sent.
    @Test func theSchemeIsReadInAnyCaseAndAnOversizedBodyIsRefusedUnread() async throws {
        let web = try WebDaemon()
        try await web.run { base, _ in
            for scheme in ["bearer", "BEARER", "Bearer"] {
                let reply = try await WebAPITests.curl(["-H", "Authorization: \(scheme) correct horse", "-X", "POST", "\(base)/rpc", "--data-binary", Self.pause])
                #expect(reply.status == 200, "\(scheme): \(reply.status) \(reply.body)")
            }
            let port = Self.port(base)
            for (length, status) in [(65_536, "HTTP/1.1 2"), (65_537, "HTTP/1.1 413")] {
                // The head only: the body never comes, so only an answer from the head can arrive.
                let head = "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer correct horse\r\nContent-Length: \(length)\r\n\r\n"
                let answer = try await Loopback.offThePool { () -> String in
                    guard let client = EventStreamClient(port: port, raw: head, readTimeout: 3) else { return "" }
                    defer { client.close() }
                    return client.blockingRead(until: "\r\n\r\n")
                }
                if status.hasSuffix("413") {
                    #expect(answer.hasPrefix(status), "Content-Length \(length): \(answer.prefix(100))")
                } else {
                    #expect(answer.isEmpty, "at the limit the body is awaited: \(answer.prefix(100))")
                }
            }
        }
    }

    /// With no password (127.0.0.1 only), any web page could drive the jukebox: a text/plain
    /// POST or a form from another site, or a name rebound to 127.0.0.1.
    @Test func openModeTakesNothingFromAnotherSite() async throws {
        let web = try WebDaemon(password: false)
        let session = try web.folder.read("s.json")
        try await web.run { base, _ in
            let host = base.replacingOccurrences(of: "http://", with: "")
            let plain = ["-X", "POST", "\(base)/rpc", "-H", "Content-Type: text/plain", "--data-binary", Self.pause]
            #expect(try await WebAPITests.curl(plain + ["-H", "Origin: http://evil.example"]).status == 403)
            #expect(try await WebAPITests.curl(plain + ["-H", "Origin: null"]).status == 403)
            #expect(try await WebAPITests.curl(plain + ["-H", "Sec-Fetch-Site: cross-site"]).status == 403)
            try web.folder.write("upload.wav", web.tone)
            let form = try await WebAPITests.curl(["-X", "POST", "\(base)/clips", "-H", "Origin: http://evil.example", "-F", "file=@\(web.folder.file("upload.wav"))"])
            #expect(form.status == 403)
            // DNS rebinding: the name is another site's, whatever address it points at.
            let rebound = try await WebAPITests.curl(plain + ["-H", "Host: rebind.evil.example"])
            #expect(rebound.status == 421, "\(rebound.body)")
            #expect(try await WebAPITests.curl(["-H", "Host: rebind.evil.example:\(Self.port(base))", "\(base)/"]).status == 421)
            #expect(try await WebAPITests.curl(["\(base)/rpc", "-H", "Host: 127.0.0.1.evil.example"]).status == 421)
            let status = try await WebAPITests.curl(["-X", "POST", "\(base)/rpc", "--data-binary", #"{"jsonrpc":"2.0","id":1,"method":"status"}"#])
            #expect(status.body.contains(#""paused":false"#), "nothing above paused it: \(status.body)")
            // The page itself, and scripts: the same site, or no Origin at all.
            #expect(try await WebAPITests.curl(plain + ["-H", "Origin: http://\(host)"]).body.contains(#""paused":true"#))
            #expect(try await WebAPITests.curl(["-X", "POST", "\(base)/rpc", "-H", "Host: localhost:\(Self.port(base))", "--data-binary", #"{"jsonrpc":"2.0","id":1,"method":"resume"}"#]).status == 200)
        }
        #expect(try web.folder.read("s.json") == session, "the session file was not rewritten")
        #expect(!FileManager.default.fileExists(atPath: web.folder.file("upload-2.wav")))
    }

    /// 260 connections from one address that each sent a header line and then nothing locked
    /// every other client out. One address may now hold a quarter of the connections.
    @Test func oneAddressCannotTakeEveryConnection() async throws {
        let web = try WebDaemon()
        try await web.run { base, log in
            let port = Self.port(base)
            // The per-address limit: a quarter of what the server serves at once.
            let held = Descriptors()
            defer { held.closeAll() }
            let refusedAt = try await Loopback.offThePool { () -> Int? in
                for index in 0..<300 {
                    let descriptor = Loopback.connect(port: Int(port))
                    guard descriptor >= 0 else { return nil }
                    held.add(descriptor)
                    // A whole request: a connection the server keeps is answered (404), one it
                    // refuses is closed unanswered.
                    let request = Array("GET /nothing HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
                    _ = request.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                    var byte: UInt8 = 0
                    if read(descriptor, &byte, 1) <= 0 { return index }
                }
                return nil
            }
            let limit = try #require(refusedAt, "no connection from 127.0.0.1 was refused")
            #expect(limit >= 8 && limit <= 64, "one address may hold \(limit)")
            #expect(await log.waitFor("the web remote refuses more connections from 127.0.0.1: it has \(limit) open"))
            // Another address is still served, while 127.0.0.1 holds its share.
            let other = try await Subprocess.run(
                .path("/usr/bin/curl"), arguments: ["-s", "--max-time", "10", "--interface", "127.0.0.2", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/"],
                platformOptions: TestProcesses.options, input: .none, output: .string(limit: 100), error: .discarded)
            #expect(other.standardOutput == "200")
        }
    }
}

extension WebHardeningTests {
    /// From four addresses, 64 connections each that sent 6 bytes of a TLS record and
    /// nothing more made every other client wait 29.5 s, and reopening every 29 s kept the
    /// page down. A handshake now has 5 s to finish, and the last places are kept for
    /// addresses that hold no connection.
    @Test func fourAddressesStallingTheirHandshakesLockNoOneOut() async throws {
        let web = try WebDaemon(scheme: .https)
        try await web.run { base, log in
            let port = Int(Self.port(base))
            let held = Descriptors()
            defer { held.closeAll() }
            let opened = ContinuousClock.now
            let stalled = try await Loopback.offThePool { () -> [Int32] in
                var first: [Int32] = []
                for from in UInt8(10)...13 {
                    for index in 0..<64 {
                        let descriptor = Loopback.connect(port: port, from: from)
                        guard descriptor >= 0 else { continue }
                        held.add(descriptor)
                        let record: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01]
                        _ = record.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                        if index == 0 { first.append(descriptor) }
                    }
                }
                return first
            }
            #expect(stalled.count == 4)
            // Someone else is served at once, over HTTPS.
            let other = try await Tool.run("curl", ["-s", "--max-time", "4", "--interface", "127.0.0.2", "--cacert", web.authority, "-o", "/dev/null", "-w", "%{http_code}", "\(base)/"])
            #expect(other.stdout == "200", "curl exit \(other.status), \(other.stdout)")
            #expect(await log.waitFor("the last 32 of the 256 places are kept for addresses that have none"))
            // And every stalled handshake is ended by the server within its 5 s.
            let ends = try await Loopback.offThePool { () -> [Duration] in
                stalled.map { descriptor in
                    var timeout = timeval(tv_sec: 20, tv_usec: 0)
                    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    var byte: UInt8 = 0
                    _ = read(descriptor, &byte, 1)
                    return ContinuousClock.now - opened
                }
            }
            for end in ends { #expect(end >= .seconds(4) && end < .seconds(12), "a stalled handshake ended after \(end)") }
        }
    }

    /// Off loopback, a plain request to the HTTPS port with `Host: evil.example` was sent to
    /// `https://evil.example/`. It is sent on only for a name the certificate is for.
    @Test func thePlainHTTPRedirectGoesOnlyToNamesTheCertificateIsFor() async throws {
        let web = try WebDaemon(scheme: .https)
        try web.folder.write("lan.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "http": { "listen": "0.0.0.0:0", "passwordFile": "password" }, "clips": [ { "file": "water.wav" } ] }
            """)
        let arguments = [web.folder.file("lan.json"), "--socket", web.socket, "--state", web.folder.file("state.json"), "--device", "null"]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "web remote listening on") { log in
            let line = await log.lines.first { $0.contains("web remote listening on") } ?? ""
            let port = line.split(separator: "(port ").last.map { String($0.dropLast()) } ?? ""
            let plain = "http://127.0.0.1:\(port)"
            for host in ["evil.example", "evil.example:\(port)", "localhost.evil.example", "10.99.99.99", "[2001:db8::1]:\(port)"] {
                let answer = try await WebAPITests.curl(["-H", "Host: \(host)", "\(plain)/clips"])
                #expect(answer.status == 400, "\(host): \(answer.status) \(answer.headers)")
                #expect(answer.headers["location"] == nil, "\(host)")
                #expect(answer.body.contains("its certificate is not for the name"), "\(answer.body)")
            }
            for host in ["localhost:\(port)", "127.0.0.1:\(port)", "LOCALHOST.:\(port)"] {
                let answer = try await WebAPITests.curl(["-H", "Host: \(host)", "\(plain)/clips"])
                #expect(answer.status == 301, "\(host): \(answer.status)")
                #expect(answer.headers["location"] == "https://\(host)/clips", "\(host)")
            }
            // A head ended by bare line feeds is answered at once, not after the idle timeout.
            let bare = try await Loopback.request(port: Int(port) ?? 0, "GET /clips HTTP/1.1\nHost: localhost\n\n")
            #expect(bare.hasPrefix("HTTP/1.1 301"), "\(bare.prefix(200))")
            return port
        }
        #expect(run.status == 0)
        // Listening on every address, the log also names addresses a phone can open.
        let phone = run.lines.first { $0.contains("on a phone, open the web remote at https://") } ?? ""
        #expect(phone.hasSuffix(":\(run.result)/"), "\(phone)")
        #expect(!phone.contains("0.0.0.0") && !phone.contains("127.0.0.1") && !phone.contains("//localhost:"), "\(phone)")
    }
}

/// Descriptors a test holds open, closed at its end.
final class Descriptors: Sendable {
    private let list = Mutex<[Int32]>([])
    func add(_ descriptor: Int32) { list.withLock { $0.append(descriptor) } }
    func closeAll() { list.withLock { $0.forEach { close($0) }; $0 = [] } }
}
