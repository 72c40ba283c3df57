import Foundation
import JukeboxTestSupport
import Subprocess
import Testing

/// The HTTP API without a browser, with curl against the built daemon: credentials, the
/// Origin check, login throttling, limits, events, uploads, and `/rpc` answering every method
/// exactly as the socket does. Each test runs over HTTPS, curl trusting the daemon's own
/// certificate authority, and over plain HTTP.
@Suite("HTTP API", .timeLimit(.minutes(2)))
struct WebAPITests {
    let daemons: [WebScheme: WebDaemon]

    init() throws {
        daemons = try Dictionary(uniqueKeysWithValues: WebScheme.allCases.map { ($0, try WebDaemon(fields: #""maxUploadSize": 100000,"#, scheme: $0)) })
    }

    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    /// One request with curl: `-i` output split into status, headers and body.
    static func curl(_ arguments: [String], input: [UInt8]? = nil) async throws -> Reply {
        let command = Arguments(["-s", "-i", "--max-time", "60"] + (WebDaemon.authority.map { ["--cacert", $0] } ?? []) + arguments)
        let output: [UInt8]
        if let input {
            output = try await Subprocess.run(.path("/usr/bin/curl"), arguments: command, platformOptions: TestProcesses.options, input: .array(input), output: .bytes(limit: 1 << 20), error: .discarded).standardOutput
        } else {
            output = try await Subprocess.run(.path("/usr/bin/curl"), arguments: command, platformOptions: TestProcesses.options, input: .none, output: .bytes(limit: 1 << 20), error: .discarded).standardOutput
        }
        let text = String(decoding: output, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts.first?.components(separatedBy: "\r\n") ?? []
        let status = head.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        }
        return Reply(status: status, headers: headers, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }


    static let bearer = ["-H", "Authorization: Bearer correct horse"]

    func rpc(_ base: String, _ request: String, credentials: [String] = bearer) async throws -> Reply {
        try await Self.curl(credentials + ["-X", "POST", "\(base)/rpc", "--data-binary", request])
    }

    @Test(arguments: WebScheme.allCases) func withoutCredentialsEverythingIsRefusedAndEveryAnswerHasTheSecurityHeaders(_ scheme: WebScheme) async throws {
        let web = daemons[scheme]!
        try await web.run { base, _ in
            let refused = try await rpc(base, #"{"jsonrpc":"2.0","id":1,"method":"pause"}"#, credentials: [])
            #expect(refused.status == 401)
            #expect(refused.headers["www-authenticate"] == "Bearer")
            for (name, value) in [("content-security-policy", "default-src 'self'"), ("x-content-type-options", "nosniff"), ("referrer-policy", "same-origin")] {
                #expect(refused.headers[name] == value, "\(name)")
            }
            #expect(refused.headers["server"] == "jukeboxd")
            // An IMF-fixdate of now, as every answer of an origin server with a clock carries.
            let date = try #require(refused.headers["date"])
            #expect(date.hasSuffix(" GMT") && date.count == 29, "\(date)")
            #expect(try await rpc(base, #"{"jsonrpc":"2.0","id":1,"method":"pause"}"#, credentials: ["-H", "Authorization: Bearer wrong"]).status == 401)
            #expect(try await Self.curl(["\(base)/events"]).status == 401)
            #expect(try await Self.curl(["\(base)/no/such/page"]).status == 404)
            let status = try await DaemonProcess.run(["--socket", web.socket, "--json", "status"], tool: "jukebox")
            #expect(status.stdout.contains(#""paused":false"#), "nothing was paused")
        }
    }

    /// `GET /healthz` needs no password and says only "ok", or the one reason with 503, as
    /// `jukebox health` does with its exit status: here the state cannot be saved (its file's
    /// place taken by a folder) until the folder goes.
    @Test func healthIsPublicAndTurnsUnhealthyWhileTheStateCannotBeSaved() async throws {
        let web = daemons[.http]!
        try await web.run { base, _ in
            let healthy = try await Self.curl(["\(base)/healthz"])
            #expect(healthy.status == 200 && healthy.body == "ok\n", "\(healthy)")
            #expect(healthy.headers["cache-control"] == "no-store")
            let cli = try await DaemonProcess.run(["--socket", web.socket, "health"], tool: "jukebox")
            #expect(cli.status == 0 && cli.stdout == "ok\n", "\(cli)")
            let state = web.folder.file("state.json")
            try? FileManager.default.removeItem(atPath: state)
            try FileManager.default.createDirectory(atPath: state + "/taken", withIntermediateDirectories: true)
            let refused = try await DaemonProcess.run(["--socket", web.socket, "pause"], tool: "jukebox")
            #expect(refused.status != 0, "a pause that cannot be saved is refused: \(refused)")
            let sick = try await Self.curl(["\(base)/healthz"])
            #expect(sick.status == 503 && sick.body.hasPrefix("the state is not being saved: ") && sick.body.hasSuffix("\n"), "\(sick)")
            #expect(!sick.body.contains("\n\n") && sick.body.split(separator: "\n").count == 1, "one line")
            let unhealthy = try await DaemonProcess.run(["--socket", web.socket, "health"], tool: "jukebox")
            #expect(unhealthy.status == 69 && unhealthy.stdout.hasPrefix("unhealthy: the state is not being saved: "), "\(unhealthy)")
            try FileManager.default.removeItem(atPath: state)
            #expect(try await DaemonProcess.run(["--socket", web.socket, "resume"], tool: "jukebox").status == 0)
            #expect(try await Self.curl(["\(base)/healthz"]).status == 200)
        }
    }

    static let prometheusMissing: String? = FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/prometheus_client/parser.py")
        ? nil : "Prometheus' Python client is not installed (apt-get install python3-prometheus-client): /metrics is not read by its parser"

    /// `GET /metrics` needs the password, and Prometheus' own parser reads it: every family
    /// the daemon writes, with the plays counted as they end.
    @Test(.enabled(if: prometheusMissing == nil, Comment(rawValue: prometheusMissing ?? "")))
    func prometheusReadsTheMetricsAndThePlaysAreCounted() async throws {
        let web = daemons[.http]!
        try await web.run { base, log in
            #expect(try await Self.curl(["\(base)/metrics"]).status == 401)
            @Sendable func scrape() async throws -> [String: Double] {
                let reply = try await Self.curl(["-H", "Authorization: Bearer \(WebDaemon.password)", "\(base)/metrics"])
                #expect(reply.status == 200)
                #expect(reply.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
                let parsed = try await Subprocess.run(
                    .path("/usr/bin/python3"),
                    arguments: ["-c", """
                        import sys
                        from prometheus_client.parser import text_string_to_metric_families
                        for family in text_string_to_metric_families(sys.stdin.read()):
                            for s in family.samples:
                                labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
                                print(f"{family.type} {s.name}{{{labels}}} {s.value}")
                        """],
                    platformOptions: TestProcesses.options, input: .string(reply.body), output: .string(limit: 1 << 16), error: .string(limit: 1 << 16))
                #expect(parsed.terminationStatus.isSuccess, "Prometheus' parser: \(parsed.standardError)")
                var values: [String: Double] = [:]
                for line in parsed.standardOutput.split(separator: "\n") {
                    let parts = line.split(separator: " ")
                    guard parts.count == 3, let value = Double(parts[2]) else { continue }
                    values["\(parts[0]) \(parts[1])"] = value
                }
                return values
            }
            let before = try await scrape()
            for family in ["counter jukeboxd_plays_total{outcome=completed}", "counter jukeboxd_missed_total{}", "gauge jukeboxd_queue_length{}",
                           "gauge jukeboxd_device_up{}", "gauge jukeboxd_clients{}", "histogram jukeboxd_state_write_seconds_count{}",
                           "gauge process_resident_memory_bytes{}", "counter process_cpu_seconds_total{}", "gauge process_open_fds{}"] {
                #expect(before[family] != nil, "\(family) in \(before.keys.sorted())")
            }
            #expect(before["gauge jukeboxd_device_up{}"] == 1)
            #expect((before["gauge process_resident_memory_bytes{}"] ?? 0) > 1_000_000)
            #expect(try await DaemonProcess.run(["--socket", web.socket, "play", "water", "walk"], tool: "jukebox").status == 0)
            #expect(await log.waitFor("played walk"))
            let after = try await scrape()
            #expect(after["counter jukeboxd_plays_total{outcome=completed}"] == (before["counter jukeboxd_plays_total{outcome=completed}"] ?? 0) + 2)
            #expect(after["gauge jukeboxd_last_play_timestamp_seconds{}"] != nil)
            #expect((after["histogram jukeboxd_state_write_seconds_count{}"] ?? 0) > (before["histogram jukeboxd_state_write_seconds_count{}"] ?? 0))
        }
    }

    /// `POST /rpc` answers exactly as the socket: the same results and the same errors.
    @Test(arguments: WebScheme.allCases) func rpcAnswersEveryMethodAsTheSocketDoes(_ scheme: WebScheme) async throws {
        let web = daemons[scheme]!
        let requests = [
            #"{"jsonrpc":"2.0","id":1,"method":"queue"}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"clips"}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"history","params":{"limit":5}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"volume"}"#,
            #"{"jsonrpc":"2.0","id":"s","method":"session"}"#,
            #"{"jsonrpc":"2.0","id":5,"method":"enqueue","params":{"clips":["wter"]}}"#,
            #"{"jsonrpc":"2.0","id":6,"method":"enqueue","params":{"clips":["../s.json"]}}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"remove","params":{"tickets":[99]}}"#,
            #"{"jsonrpc":"2.0","id":8,"method":"volume","params":{"level":101}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"dance"}"#,
            #"{"jsonrpc":"2.0","id":10,"method":"updateClip","params":{"id":"nope","title":"x"}}"#,
            #"{"jsonrpc":"2.0","id":11,"method":"skip"}"#,
            "not json",
        ]
        try await web.run { base, _ in
            for request in requests {
                let reply = try await rpc(base, request)
                #expect(reply.status == 200)
                #expect(await reply.body == RawControl.call(web.socket, request), "\(request)")
            }
            // Changes made over HTTP are the socket's changes, and durable before the answer.
            let paused = try await rpc(base, #"{"jsonrpc":"2.0","id":12,"method":"pause"}"#)
            #expect(paused.body == #"{"id":12,"jsonrpc":"2.0","result":{"paused":true}}"#)
            #expect(await RawControl.call(web.socket, #"{"jsonrpc":"2.0","id":1,"method":"status"}"#)?.contains(#""paused":true"#) == true)
            let queued = try await rpc(base, #"{"jsonrpc":"2.0","id":13,"method":"enqueue","params":{"clips":["walk"]}}"#)
            #expect(queued.body.contains(#""origin":"web""#), "\(queued.body)")
            #expect(try await rpc(base, #"{"jsonrpc":"2.0","method":"resume"}"#).status == 204, "a notification has no answer")
        }
        #expect(try String(decoding: web.folder.read("state.json"), as: UTF8.self).contains(#""client":"web""#))
    }

    /// A browser logs in for a cookie; a change it sends must come from the page's own origin.
    @Test(arguments: WebScheme.allCases) func aCookieNeedsTheSameOriginToChangeAnything(_ scheme: WebScheme) async throws {
        let web = daemons[scheme]!
        try await web.run { base, _ in
            let login = try await Self.curl(["-X", "POST", "\(base)/login", "--data", "password=correct+horse"])
            #expect(login.status == 204)
            let cookie = try #require(login.headers["set-cookie"])
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Max-Age=2592000"))
            let session = String(cookie.split(separator: ";")[0])
            let host = base.replacingOccurrences(of: "\(scheme)://", with: "")
            let pause = #"{"jsonrpc":"2.0","id":1,"method":"pause"}"#
            #expect(try await rpc(base, pause, credentials: ["-H", "Cookie: \(session)"]).status == 403)
            #expect(try await rpc(base, pause, credentials: ["-H", "Cookie: \(session)", "-H", "Origin: http://evil.example"]).status == 403)
            // The page's own origin is its scheme too: over HTTPS, http:// is another site.
            let otherScheme = scheme == .https ? "http" : "https"
            #expect(try await rpc(base, pause, credentials: ["-H", "Cookie: \(session)", "-H", "Origin: \(otherScheme)://\(host)"]).status == 403)
            #expect(try await rpc(base, pause, credentials: ["-H", "Cookie: \(session)", "-H", "Origin: \(scheme)://\(host)"]).body.contains(#""paused":true"#))
            #expect(try await Self.curl(["-H", "Cookie: \(session)", "-X", "POST", "\(base)/logout"]).status == 204)
            #expect(try await rpc(base, pause, credentials: ["-H", "Cookie: \(session)", "-H", "Origin: \(scheme)://\(host)"]).status == 401, "logged out")
        }
    }

    @Test(arguments: WebScheme.allCases) func fiveWrongPasswordsInAMinuteAreThrottled(_ scheme: WebScheme) async throws {
        let web = daemons[scheme]!
        try await web.run { base, log in
            for _ in 0..<5 { #expect(try await Self.curl(["-X", "POST", "\(base)/login", "--data", "password=guess"]).status == 401) }
            let throttled = try await Self.curl(["-X", "POST", "\(base)/login", "--data", "password=correct+horse"])
            #expect(throttled.status == 429, "even the right password, for the rest of the minute")
            #expect(Int(throttled.headers["retry-after"] ?? "") ?? 0 > 0)
            #expect(await log.lines.allSatisfy { !$0.contains("guess") && !$0.contains("correct horse") }, "passwords are never logged")
        }
    }

    @Test(arguments: WebScheme.allCases) func oversizedBodiesAreRefused(_ scheme: WebScheme) async throws {
        let web = daemons[scheme]!
        try await web.run { base, _ in
            // At the limit, a request padded with spaces is answered; one byte over, refused.
            let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"volume"}"#.utf8)
            let atLimit = request + [UInt8](repeating: UInt8(ascii: " "), count: 65_536 - request.count)
            #expect(try await Self.curl(Self.bearer + ["-X", "POST", "\(base)/rpc", "--data-binary", "@-"], input: atLimit).status == 200)
            #expect(try await Self.curl(Self.bearer + ["-X", "POST", "\(base)/rpc", "--data-binary", "@-"], input: atLimit + [32]).status == 413)
            let big = [UInt8](repeating: UInt8(ascii: " "), count: 70_000)
            #expect(try await Self.curl(Self.bearer + ["-X", "POST", "\(base)/rpc", "--data-binary", "@-"], input: big).status == 413)
            let upload = try await Self.curl(Self.bearer + ["-X", "POST", "\(base)/clips?name=big.wav", "--data-binary", "@-"], input: [UInt8](repeating: 0, count: 100_001))
            #expect(upload.status == 413)
            #expect(upload.body.contains("upload-too-large"))
        }
        #expect(!FileManager.default.fileExists(atPath: web.folder.file("big.wav")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: web.folder.path).allSatisfy { !$0.hasPrefix(".upload-") })
    }

    /// Events arrive as Server-Sent Events; a client that reconnects gets a new stream.
    @Test(arguments: WebScheme.allCases) func eventsArriveAsServerSentEventsAndAReconnectWorks(_ scheme: WebScheme) async throws {
        let web = daemons[scheme]!
        try await web.run { base, _ in
            let port = UInt16(base.split(separator: ":").last ?? "") ?? 0
            for (round, method) in ["pause", "resume"].enumerated() {
                let stream = try #require(EventStreamClient(port: port, authorization: "Bearer correct horse"))
                defer { stream.close() }
                #expect(await stream.read(until: ": jukeboxd events").contains("HTTP/1.1 200 OK"))
                _ = await RawControl.call(web.socket, #"{"jsonrpc":"2.0","id":1,"method":"\#(method)"}"#)
                let event = round == 0 ? "paused" : "resumed"
                #expect(await stream.read(until: "event: \(event)\ndata: {}\n\n").contains("event: \(event)"), "round \(round)")
            }
        }
    }

    /// A client that follows events but reads slowly loses the oldest of them: the daemon does
    /// not wait for it, does not hold every event for it, and its newest events still arrive.
    @Test func aSlowEventReaderLosesTheOldestAndNeverHoldsUpTheDaemon() async throws {
        let web = daemons[.http]!
        try await web.run { base, _ in
            let port = UInt16(base.split(separator: ":").last ?? "") ?? 0
            let stream = try #require(EventStreamClient(port: port, authorization: "Bearer correct horse", receiveBuffer: 4096))
            defer { stream.close() }
            #expect(await stream.read(until: ": jukeboxd events").contains("HTTP/1.1 200 OK"))
            _ = await RawControl.call(web.socket, #"{"jsonrpc":"2.0","id":1,"method":"pause"}"#)
            let enqueue = #"{"jsonrpc":"2.0","id":2,"method":"enqueue","params":{"clips":["# + Array(repeating: #""walk""#, count: 9000).joined(separator: ",") + "]}}"
            // 54 000 events, far more than the 1 000 kept for a client and the kernel's buffers.
            for _ in 0..<3 {
                let queued = await RawControl.call(web.socket, enqueue) ?? "no answer"
                #expect(queued.contains("ticket"), "\(queued.prefix(300))")
                #expect(await RawControl.call(web.socket, #"{"jsonrpc":"2.0","id":3,"method":"clear"}"#)?.contains("result") == true)
            }
            let status = try await DaemonProcess.run(["--socket", web.socket, "status"], tool: "jukebox")
            #expect(status.status == 0, "the daemon answers while the reader lags: \(status.stderr)")
            _ = await RawControl.call(web.socket, #"{"jsonrpc":"2.0","id":4,"method":"resume"}"#)
            let (queued, sawResume) = await stream.count("event: queued\n", until: "event: resumed\n")
            #expect(sawResume, "the newest event arrives")
            #expect(queued < 27_000, "\(queued) of 27 000 queued events arrived: the oldest were dropped")
            #expect(queued > 0)
            print("slow reader: \(queued) of 27 000 queued events arrived")
        }
    }

    /// A client that stops half-way through its request headers, or half-way through an
    /// upload's body, is disconnected after 30 s, and the upload leaves nothing behind.
    @Test(arguments: WebScheme.allCases) func aClientThatStopsSendingIsDisconnectedAfter30Seconds(_ scheme: WebScheme) async throws {
        let web = daemons[scheme]!
        try await web.run { base, log in
            let port = UInt16(base.split(separator: ":").last ?? "") ?? 0
            let stalls = [
                "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/",
                "POST /clips?name=stalled.wav HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer correct horse\r\nContent-Length: 1000\r\n\r\nRIFF",
            ]
            let started = ContinuousClock.now
            let authority = WebDaemon.authority
            let ends = await withTaskGroup(of: Duration?.self) { group in
                for stall in stalls {
                    group.addTask {
                        // A blocking read, on a thread of its own rather than the test's pool.
                        (try? await Loopback.offThePool { () -> Duration? in
                            guard let client = EventStreamClient(port: port, raw: stall, readTimeout: 60, authority: authority) else { return nil }
                            defer { client.close() }
                            _ = client.blockingRead(until: "never sent")
                            return ContinuousClock.now - started
                        }) ?? nil
                    }
                }
                return await group.reduce(into: [Duration?]()) { $0.append($1) }
            }
            for end in ends {
                let seconds = end.map { Double($0.components.seconds) } ?? 0
                #expect((29...50).contains(seconds), "disconnected after \(seconds) s")
            }
            #expect(await log.waitFor("the upload of stalled.wav ended after 4 of its 1000 bytes; nothing of it was kept"))
            let left = try FileManager.default.contentsOfDirectory(atPath: web.folder.path).filter { $0.hasPrefix(".upload") }
            #expect(left.isEmpty, "\(left)")
        }
    }

    /// `POST /clips` goes through the socket's upload path: the same checks and names.
    @Test(arguments: WebScheme.allCases) func anUploadAddsAClip(_ scheme: WebScheme) async throws {
        let web = daemons[scheme]!
        try await web.run { base, _ in
            let added = try await Self.curl(Self.bearer + ["-X", "POST", "\(base)/clips?name=water.wav&title=Again", "--data-binary", "@-"], input: web.tone)
            #expect(added.status == 201, "\(added.body)")
            #expect(added.body.contains(#""file":"water-2.wav""#) && added.body.contains(#""title":"Again""#), "\(added.body)")
            // The query is read as browsers write it (URLSearchParams, a form sent by GET): `+`
            // is a space, and %2B a plus. A title of 1 KiB is taken; one byte more is refused.
            let spaced = try await Self.curl(Self.bearer + ["-X", "POST", "\(base)/clips?name=plants.wav&title=Water+the+plants%2B", "--data-binary", "@-"], input: web.tone)
            #expect(spaced.status == 201 && spaced.body.contains(#""title":"Water the plants+""#), "\(spaced.body)")
            let atLimit = String(repeating: "t", count: 1024)
            let long = try await Self.curl(Self.bearer + ["-X", "POST", "\(base)/clips?name=long.wav&title=\(atLimit)", "--data-binary", "@-"], input: web.tone)
            #expect(long.status == 201 && long.body.contains(atLimit), "\(long.body.prefix(300))")
            let tooLong = try await Self.curl(Self.bearer + ["-X", "POST", "\(base)/clips?name=toolong.wav&title=\(atLimit)t", "--data-binary", "@-"], input: web.tone)
            #expect(tooLong.status == 400 && tooLong.body.contains("the query's title is over 1024 bytes"), "\(tooLong.body)")
            let broken = try await Self.curl(Self.bearer + ["-X", "POST", "\(base)/clips?name=broken.wav&title=50%zz", "--data-binary", "@-"], input: web.tone)
            #expect(broken.status == 400 && broken.body.contains("the query's title is not percent-encoded UTF-8 text"), "\(broken.body)")
            let refused = try await Self.curl(Self.bearer + ["-X", "POST", "\(base)/clips?name=notes.wav", "--data-binary", "@-"], input: Array("not audio".utf8))
            #expect(refused.status == 422)
            #expect(refused.body.contains("unplayable-clip"))
            // The refusal names the file as it was sent, never where the daemon kept it.
            #expect(refused.body.contains("notes.wav") && !refused.body.contains(".upload-") && !refused.body.contains(".part"), "\(refused.body)")
        }
        #expect(try web.folder.read("water-2.wav") == web.tone)
        #expect(!FileManager.default.fileExists(atPath: web.folder.file("notes.wav")))
        for refused in ["toolong.wav", "broken.wav"] { #expect(!FileManager.default.fileExists(atPath: web.folder.file(refused)), "\(refused)") }
    }

    /// What a browser's file input sends: a multipart form, read as it arrives, with the
    /// same checks and limits as any upload, and nothing left behind when it is refused.
    @Test(arguments: WebScheme.allCases) func aFormUploadAddsAClipAndEveryRefusalLeavesNothing(_ scheme: WebScheme) async throws {
        let web = daemons[scheme]!
        let phone = try TemporaryDirectory()
        try phone.write("recording.wav", web.tone)
        // Over the session's maxUploadSize of 100 000 bytes: found while it streams, and at once.
        try phone.write("long.wav", WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 60_000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1))
        try phone.write("huge.wav", WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 150_000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1))
        try await web.run { base, _ in
            func form(_ parts: [String]) async throws -> Reply {
                try await Self.curl(Self.bearer + ["-X", "POST", "\(base)/clips"] + parts.flatMap { ["-F", $0] })
            }
            let added = try await form(["title=Morning", "file=@\(phone.file("recording.wav"));filename=morning.wav;type=audio/wav"])
            #expect(added.status == 201, "\(added.body)")
            #expect(added.body.contains(#""file":"morning.wav""#) && added.body.contains(#""title":"Morning""#), "\(added.body)")

            for file in ["long.wav", "huge.wav"] {
                let refused = try await form(["file=@\(phone.file(file))"])
                #expect(refused.status == 413, "\(file): \(refused.body)")
                #expect(refused.body.contains("upload-too-large") && refused.body.contains(file), "\(refused.body)")
            }
            let noFile = try await form(["title=Morning"])
            #expect(noFile.status == 400 && noFile.body.contains("the form has no file"), "\(noFile.body)")
            let unknown = try await form(["colour=red", "file=@\(phone.file("recording.wav"))"])
            #expect(unknown.status == 400 && unknown.body.contains("the form field colour is not known"), "\(unknown.body)")
            let longTitle = try await form(["title=" + String(repeating: "t", count: 2000), "file=@\(phone.file("recording.wav"))"])
            #expect(longTitle.status == 400 && longTitle.body.contains("over 1024 bytes"), "\(longTitle.body)")
            let cut = try await Self.curl(Self.bearer + [
                "-X", "POST", "\(base)/clips", "-H", "Content-Type: multipart/form-data; boundary=b", "--data-binary", "@-",
            ], input: Array("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cut.wav\"\r\n\r\n".utf8) + web.tone)
            #expect(cut.status == 400 && cut.body.contains("the form did not arrive whole"), "\(cut.body)")
        }
        #expect(try web.folder.read("morning.wav") == web.tone)
        let left = try FileManager.default.contentsOfDirectory(atPath: web.folder.path).filter { $0.hasPrefix(".upload") || $0.hasPrefix("long") || $0.hasPrefix("huge") || $0.hasPrefix("cut") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test(arguments: WebScheme.allCases) func aPortInUseOrNoPasswordBeyondLoopbackStopsTheStart(_ scheme: WebScheme) async throws {
        let web = daemons[scheme]!
        let listener = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = bind(listener, $0, length); _ = getsockname(listener, $0, &length) }
        }
        listen(listener, 1)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let taken = try await DaemonProcess.run(web.arguments + ["--http", "127.0.0.1:\(port)"])
        #expect(taken.status == 69)
        #expect(taken.stderr.contains("jukeboxd: cannot listen for the web remote on 127.0.0.1:\(port): the port is in use by another program"), "\(taken.stderr)")
        let open = try await DaemonProcess.run([web.folder.file("s.json"), "--socket", web.socket, "--state", web.folder.file("state.json"), "--http", "0.0.0.0:8080", "--http-password-file", web.folder.file("none")])
        #expect(open.status == 78)
        #expect(open.stderr.hasPrefix("jukeboxd: the web password file \(web.folder.file("none")): no such file"), "\(open.stderr)")
        try web.folder.write("open.json", text: #"{ "http": { "listen": "0.0.0.0:8080" }, "clips": [ { "file": "water.wav" } ] }"#)
        let unprotected = try await DaemonProcess.run([web.folder.file("open.json"), "--socket", web.socket, "--state", web.folder.file("state.json")])
        #expect(unprotected.status == 78)
        #expect(unprotected.stderr.contains("would be open to the whole network without a password"))
        // Without a password: a name that only looks like a loopback address may stand for any
        // address, and is refused; another address of 127.0.0.0/8 is loopback, and served.
        let passwordless = [web.folder.file("open.json"), "--socket", web.socket, "--state", web.folder.file("state.json"), "--device", "null"]
        for name in ["127.jukebox.lan", "127.0.0.1.nip.io", "127.1", "[::ffff:127.0.0.1]"] {
            let named = try await DaemonProcess.run(passwordless + ["--http", "\(name):0"])
            #expect(named.status == 78, "\(name): \(named.stderr)")
            #expect(named.stderr.contains("would be open to the whole network without a password"), "\(name): \(named.stderr)")
        }
        let served = try await DaemonProcess.withDaemon(passwordless + ["--http", "127.0.0.2:0"], ready: "web remote listening") { _ in }
        #expect(served.status == 0, "\(served.lines)")
    }
}

/// A plain HTTP client for `/events`, reading the stream as it comes (curl through a pipe
/// would be read in large blocks). Its reads wait on a thread of their own, never on the test
/// process's cooperative pool.
final class EventStreamClient: @unchecked Sendable {
    // @unchecked: `received` is only used by one read at a time, in the order the test awaits them.
    let descriptor: Int32
    private var received = ""

    /// The openssl s_client that carries the connection over TLS, when there is one.
    private var bridge: pid_t = 0

    /// Follows `/events` with `authorization`.
    convenience init?(port: UInt16, authorization: String, receiveBuffer: Int32? = nil, authority: String? = WebDaemon.authority) {
        self.init(port: port, raw: "GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: \(authorization)\r\n\r\n", receiveBuffer: receiveBuffer, authority: authority)
    }

    /// Sends `raw` as the start of a request. `receiveBuffer`: a small one makes a client that
    /// reads slowly. A read waits at most `readTimeout` seconds. With `authority`, the
    /// connection is TLS, trusting that certificate authority only: the bytes go through
    /// `openssl s_client`, by way of a socket pair.
    init?(port: UInt16, raw: String, receiveBuffer: Int32? = nil, readTimeout: Int = 10, authority: String? = nil) {
        if let authority {
            var pair: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { return nil }
            descriptor = pair[0]
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            posix_spawn_file_actions_adddup2(&actions, pair[1], 0)
            posix_spawn_file_actions_adddup2(&actions, pair[1], 1)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let arguments = ["openssl", "s_client", "-quiet", "-connect", "127.0.0.1:\(port)", "-CAfile", authority, "-verify_return_error", "-verify_ip", "127.0.0.1"]
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            let spawned = posix_spawn(&bridge, "/usr/bin/openssl", &actions, nil, &argv, environ)
            argv.forEach { free($0) }
            posix_spawn_file_actions_destroy(&actions)
            Glibc.close(pair[1])
            guard spawned == 0 else { Glibc.close(pair[0]); return nil }
        } else {
            descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            if var size = receiveBuffer { setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard connected == 0 else { return nil }
        }
        var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array(raw.utf8)
        _ = request.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Everything received up to and including `text` (or until the stream stops for 10 s).
    func read(until text: String) async -> String {
        (try? await Loopback.offThePool { self.blockingRead(until: text) }) ?? ""
    }

    /// Reads until `marker` arrives (or the stream stops for 10 s), counting the `needle`s on
    /// the way without keeping what was read.
    func count(_ needle: String, until marker: String) async -> (count: Int, sawMarker: Bool) {
        (try? await Loopback.offThePool { self.blockingCount(needle, until: marker) }) ?? (0, false)
    }

    /// `read(until:)` on the calling thread.
    func blockingRead(until text: String) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(text) {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            received += String(decoding: buffer.prefix(count), as: UTF8.self)
        }
        guard let end = received.range(of: text) else { return received }
        let head = String(received[..<end.upperBound])
        received = String(received[end.upperBound...])
        return head
    }

    private func blockingCount(_ needle: String, until marker: String) -> (count: Int, sawMarker: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var tail = received
        var count = 0
        while true {
            if tail.contains(marker) {
                count += tail.components(separatedBy: marker)[0].components(separatedBy: needle).count - 1
                return (count, true)
            }
            // Count what can no longer be part of a marker or needle split across reads.
            let keep = max(needle.utf8.count, marker.utf8.count)
            if tail.utf8.count > keep * 2 {
                let cut = tail.utf8.index(tail.utf8.endIndex, offsetBy: -keep)
                let done = String(tail[..<cut])
                count += done.components(separatedBy: needle).count - 1
                // A needle straddling the cut is counted in the next piece.
                let straddle = done.utf8.count >= needle.utf8.count - 1 ? String(done.utf8.suffix(needle.utf8.count - 1))! : ""
                tail = (done.hasSuffix(needle) ? "" : straddle) + String(tail[cut...])
            }
            let read = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard read > 0 else { return (count, false) }
            tail += String(decoding: buffer.prefix(read), as: UTF8.self)
        }
    }

    func close() {
        Glibc.close(descriptor)
        if bridge > 0 {
            // SIGKILL: the child may have inherited a mask that blocks SIGTERM.
            kill(bridge, SIGKILL)
            var status: Int32 = 0
            waitpid(bridge, &status, 0)
        }
    }
}
