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
            input: .none, output: .string(limit: 1 << 16), error: .discarded)
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
                input: .none, output: .string(limit: 100), error: .discarded)
            #expect(other.standardOutput == "200")
        }
    }
}

/// Descriptors a test holds open, closed at its end.
final class Descriptors: Sendable {
    private let list = Mutex<[Int32]>([])
    func add(_ descriptor: Int32) { list.withLock { $0.append(descriptor) } }
    func closeAll() { list.withLock { $0.forEach { close($0) }; $0 = [] } }
}
