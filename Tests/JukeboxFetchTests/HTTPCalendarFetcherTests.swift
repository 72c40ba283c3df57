import Foundation
import JukeboxCalendar
import JukeboxCore
import JukeboxFetch
import JukeboxTestSupport
import Testing

/// The calendar fetcher against Python's http.server, started and stopped by the test: a 304
/// for an unchanged calendar, refusals in words, the size, time and redirect limits at, under
/// and over, and HTTPS that no authority signed.
@Suite("Fetching calendars", .serialized, .timeLimit(.minutes(1)))
struct HTTPCalendarFetcherTests {
    static let calendar = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20261203\r\nSUMMARY:Exam\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

    /// Paths: /cal.ics (ETag "v1", 304 when it is sent back), /missing (404), /private
    /// (403), /size/N (N bytes), /redirect/N (N redirects before the calendar), /hang (no
    /// answer), /trickle (20 bytes, one every 0.1 s). With a certificate and key it serves HTTPS.
    static let server = #"""
        import http.server, socketserver, ssl, sys, time
        CAL = sys.argv[1].encode()
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args): pass
            def send(self, code, body=b"", headers={}):
                self.send_response(code)
                for k, v in headers.items(): self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def do_GET(self):
                p = self.path
                if p == "/cal.ics":
                    if self.headers.get("If-None-Match") == '"v1"': return self.send(304)
                    return self.send(200, CAL, {"ETag": '"v1"', "Content-Type": "text/calendar"})
                if p == "/missing": return self.send(404)
                if p == "/private": return self.send(403)
                if p.startswith("/size/"): return self.send(200, b"a" * int(p[6:]))
                if p.startswith("/redirect/"):
                    n = int(p[10:])
                    return self.send(200, CAL) if n == 0 else self.send(302, b"", {"Location": "/redirect/%d" % (n - 1)})
                if p == "/hang":
                    time.sleep(30)
                if p == "/trickle":
                    self.send_response(200)
                    self.send_header("Content-Length", "20")
                    self.end_headers()
                    for _ in range(20):
                        self.wfile.write(b"a")
                        self.wfile.flush()
                        time.sleep(0.1)
                    return
                return self.send(500)
        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
        server = Server(("127.0.0.1", 0), Handler)
        if len(sys.argv) > 3:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[2], sys.argv[3])
            server.socket = context.wrap_socket(server.socket, server_side=True)
        print("ready %d" % server.server_address[1], file=sys.stderr, flush=True)
        server.serve_forever()
        """#

    /// Runs `body` with the server's base address.
    func withServer(https: Bool = false, _ body: @Sendable (String) async throws -> Void) async throws {
        let folder = try TemporaryDirectory()
        let script = try folder.write("server.py", text: Self.server)
        var arguments = [script, Self.calendar]
        if https {
            let made = try await Tool.run("openssl", [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", folder.file("key.pem"), "-out", folder.file("cert.pem"),
            ])
            try #require(made.status == 0, "openssl made a certificate: \(made.stderr)")
            arguments += [folder.file("cert.pem"), folder.file("key.pem")]
        }
        let server = ServerProcess("/usr/bin/python3", arguments) { $0.hasPrefix("ready ") }
        try await server.whileRunning { server in
            let line = await server.log.lines.first { $0.hasPrefix("ready ") }!
            try await body("\(https ? "https" : "http")://127.0.0.1:\(line.dropFirst(6))")
        }
    }

    func failure(_ address: String, with fetcher: HTTPCalendarFetcher = HTTPCalendarFetcher()) async -> String? {
        do {
            _ = try await fetcher.fetch(address, since: nil)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aCalendarIsFetchedAndAnUnchangedOneIsA304() async throws {
        try await withServer { base in
            let fetcher = HTTPCalendarFetcher()
            let first = try await fetcher.fetch(base + "/cal.ics", since: nil)
            guard case .fetched(let text, let validators) = first else {
                Issue.record("fetched: \(first)")
                return
            }
            #expect(text == Self.calendar)
            #expect(validators.etag == "\"v1\"")
            #expect(try await fetcher.fetch(base + "/cal.ics", since: validators) == .notModified)
        }
    }

    @Test func refusalsAreSaidInWords() async throws {
        try await withServer { base in
            #expect(await failure(base + "/missing")?.contains("has no calendar there (404)") == true)
            #expect(await failure(base + "/private")?.contains("the address is private") == true)
            // A port nothing listens on.
            let closed = "http://127.0.0.1:\(Loopback.serverPort())/cal.ics"
            let refused = await failure(closed)
            #expect(refused?.contains("could not be reached") == true, "\(refused ?? "")")
        }
    }

    @Test func aServerThatNeverAnswersIsGivenUpOnAtTheTimeout() async throws {
        try await withServer { base in
            let started = ContinuousClock.now
            let said = await failure(base + "/hang", with: HTTPCalendarFetcher(timeout: .seconds(1)))
            #expect(said?.contains("did not answer within its time") == true, "\(said ?? "")")
            #expect(ContinuousClock.now - started < .seconds(10))
        }
    }

    @Test(arguments: [ICalendar.maxBytes - 1, ICalendar.maxBytes, ICalendar.maxBytes + 1])
    func theSizeLimitAtUnderAndOver(size: Int) async throws {
        try await withServer { base in
            let said = await failure(base + "/size/\(size)")
            if size <= ICalendar.maxBytes { #expect(said == nil, "\(said ?? "")") } else { #expect(said?.contains("larger than 4 MB") == true, "\(said ?? "")") }
        }
    }

    @Test(arguments: [HTTPCalendarFetcher.maxRedirects - 1, HTTPCalendarFetcher.maxRedirects, HTTPCalendarFetcher.maxRedirects + 1])
    func theRedirectLimitAtUnderAndOver(redirects: Int) async throws {
        try await withServer { base in
            let said = await failure(base + "/redirect/\(redirects)")
            if redirects <= HTTPCalendarFetcher.maxRedirects { #expect(said == nil, "\(said ?? "")") } else { #expect(said?.contains("more than 5 times") == true, "\(said ?? "")") }
        }
    }

    @Test func aCertificateNoAuthoritySignedIsRefused() async throws {
        try await withServer(https: true) { base in
            let said = await failure(base + "/cal.ics")
            #expect(said?.contains("certificate could not be verified") == true, "\(said ?? "")")
        }
    }
}
