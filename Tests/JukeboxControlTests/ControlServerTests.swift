import FoundationEssentials
import Glibc
import JukeboxControl
import JukeboxCoreTestSupport
import JukeboxCore
import JukeboxDispatch
import JukeboxProtocol
import JukeboxTestSupport
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// The real socket: a running `ControlServer` in a temporary folder, driven by NIO clients.
/// The limit guards against a hang. Under qemu a debug build takes 46 s alone to encode and
/// parse the 12 MB of replies in `aClientThatDoesNotReadStopsBeingRead`, and more beside the
/// rest of the suite, so a minute was too close.
@Suite("Control socket", .timeLimit(.minutes(2)))
struct ControlServerTests {
    let fixture: TestCore
    var core: Jukebox { fixture.core }
    var path: String { fixture.folder.file("control.sock") }

    init() async throws { fixture = try await TestCore() }

    /// Runs `body` while the server listens; the server stops when it returns.
    func withServer(
        maxConnections: Int = ControlServer.defaultMaxConnections, idleTimeout: Duration = ControlServer.defaultIdleTimeout,
        uploadStallTimeout: Duration = ControlServer.defaultUploadStallTimeout, log: (any LogHandler)? = nil, _ body: () async throws -> Void
    ) async throws {
        let (ready, signal) = AsyncStream.makeStream(of: Void.self)
        var logger = Logger(label: "test") { _ in log ?? SwiftLogNoOpLogHandler() }
        logger.logLevel = .debug
        let server = ControlServer(path: path, core: core, logger: logger, maxConnections: maxConnections, idleTimeout: idleTimeout, uploadStallTimeout: uploadStallTimeout) {
            signal.yield()
        }
        let running = Task { try await server.run() }
        for await _ in ready { break }
        try await body()
        running.cancel()
        try? await running.value
    }

    /// `halfClose`: finishing the writer shuts the socket's writing side, as socat does.
    func connect(halfClose: Bool = false) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(unixDomainSocketPath: path) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                    wrappingChannelSynchronously: channel,
                    configuration: .init(isOutboundHalfClosureEnabled: halfClose, inboundType: ByteBuffer.self, outboundType: ByteBuffer.self))
            }
        }
    }

    /// Sends `lines` and collects `count` answer lines (or fewer if the server closes first).
    func exchange(_ lines: [String], expecting count: Int, raw: [UInt8]? = nil) async throws -> [String] {
        let channel = try await connect()
        return try await channel.executeThenClose { inbound, outbound in
            for line in lines { try await outbound.write(ByteBuffer(string: line + "\n")) }
            if let raw { try await outbound.write(ByteBuffer(bytes: raw)) }
            var received: [String] = []
            var pending = ""
            for try await chunk in inbound {
                pending += String(buffer: chunk)
                while let newline = pending.firstIndex(of: "\n") {
                    received.append(String(pending[..<newline]))
                    pending = String(pending[pending.index(after: newline)...])
                }
                if received.count >= count { break }
            }
            return received
        }
    }

    static func request(_ method: String, id: Int, params: String = "{}") -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#
    }

    @Test func roundTripManyRequestsOnOneConnection() async throws {
        try await withServer {
            let answers = try await exchange(
                [Self.request("enqueue", id: 1, params: #"{"clips":["ward"]}"#), Self.request("volume", id: 2, params: #"{"level":30}"#), Self.request("queue", id: 3)],
                expecting: 3)
            #expect(answers.count == 3)
            #expect(answers[0].hasPrefix(#"{"id":1,"jsonrpc":"2.0","result":{"entries":[{"clip":"ward""#))
            #expect(answers[1] == #"{"id":2,"jsonrpc":"2.0","result":{"volume":30}}"#)
            #expect(answers[2].contains(#""waiting":[{"clip":"ward""#))
        }
    }

    @Test func clientThatShutsItsWritingSideStillGetsItsAnswers() async throws {
        try await withServer {
            let channel = try await connect(halfClose: true)
            let answers = try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: Self.request("pause", id: 1) + "\n" + Self.request("resume", id: 2) + "\n"))
                outbound.finish()
                var text = ""
                for try await chunk in inbound { text += String(buffer: chunk) }
                return text
            }
            #expect(answers == #"{"id":1,"jsonrpc":"2.0","result":{"paused":true}}"# + "\n" + #"{"id":2,"jsonrpc":"2.0","result":{"paused":false}}"# + "\n")
        }
    }

    @Test func socketIsNotWorldWritable() async throws {
        try await withServer {
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o660)
        }
    }

    @Test func malformedInputGetsErrorsAndTheConnectionKeepsServing() async throws {
        try await withServer {
            let answers = try await exchange(
                ["{not json", #"{"jsonrpc":"2.0","id":1,"method":"nope"}"#, #"{"jsonrpc":"2.0","id":2,"method":"volume","params":{"level":"loud"}}"#, Self.request("status", id: 3)],
                expecting: 4)
            #expect(answers.map { $0.contains(#""code":-32700"#) } == [true, false, false, false])
            #expect(answers[1].contains(#""code":-32601"#))
            #expect(answers[2].contains(#""code":-32602"#))
            #expect(answers[3].contains(#""result":{"device":"fake""#))
        }
    }

    @Test func oversizedLineIsRefusedAndTheConnectionClosed() async throws {
        try await withServer {
            let huge = [UInt8](repeating: UInt8(ascii: "x"), count: RPCDispatcher.maxLineLength + 10) + [UInt8(ascii: "\n")]
            let answers = try await exchange([], expecting: 2, raw: huge)
            #expect(answers == [#"{"error":{"code":-32600,"data":{"reason":"line-too-long"},"message":"request line longer than 65536 bytes; closing the connection"},"id":null,"jsonrpc":"2.0"}"#])
            // Everyone else is still served.
            #expect(try await exchange([Self.request("status", id: 1)], expecting: 1).count == 1)
        }
    }

    @Test func silentClientDoesNotBlockOthers() async throws {
        try await withServer {
            let silent = try await connect()
            #expect(try await exchange([Self.request("pause", id: 1)], expecting: 1) == [#"{"id":1,"jsonrpc":"2.0","result":{"paused":true}}"#])
            try await silent.channel.close()
        }
    }

    @Test func manyClientsAtOnceLoseNothingAndKeepTheirOrder() async throws {
        try await withServer {
            let clients = 32, perClient = 100
            let results = try await withThrowingTaskGroup(of: [UInt64].self) { group in
                for _ in 0..<clients {
                    group.addTask {
                        let lines = (1...perClient).map { Self.request("enqueue", id: $0, params: #"{"clips":["water"]}"#) }
                        let answers = try await exchange(lines, expecting: perClient)
                        return answers.compactMap { answer -> UInt64? in
                            guard let range = answer.range(of: #""ticket":"#) else { return nil }
                            return UInt64(answer[range.upperBound...].prefix { $0.isNumber })
                        }
                    }
                }
                return try await group.reduce(into: [[UInt64]]()) { $0.append($1) }
            }
            #expect(results.map(\.count) == Array(repeating: perClient, count: clients), "every request answered")
            #expect(results.allSatisfy { $0 == $0.sorted() }, "each client's enqueues keep their order")
            #expect(Set(results.joined()) == Set(1...UInt64(clients * perClient)), "no ticket lost or given twice")
            let waiting = await fixture.waiting()
            #expect(waiting == waiting.sorted(), "the queue's order is the order the daemon accepted them in")
            #expect(waiting.count == clients * perClient)
        }
    }

    @Test func subscribedConnectionReceivesEvents() async throws {
        try await withServer {
            let channel = try await connect()
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: Self.request("subscribe", id: 1) + "\n"))
                var iterator = inbound.makeAsyncIterator()
                var text = ""
                while !text.contains("\n") { text += String(buffer: try #require(await iterator.next())) }
                #expect(text.hasPrefix(#"{"id":1,"jsonrpc":"2.0","result":{"subscribed":true}}"#))
                core.events.publish(.paused)
                while !text.contains(#""method":"paused""#) { text += String(buffer: try #require(await iterator.next())) }
                #expect(text.hasSuffix(#"{"jsonrpc":"2.0","method":"paused","params":{}}"# + "\n"))
            }
        }
    }

    /// Reads lines from one connection, across calls (a stream has one iterator only).
    struct LineReader {
        var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
        var pending = ""

        init(_ inbound: NIOAsyncChannelInboundStream<ByteBuffer>) { iterator = inbound.makeAsyncIterator() }

        /// Up to `count` lines: fewer if the connection closes first.
        mutating func next(_ count: Int) async throws -> [String] {
            var received: [String] = []
            while true {
                while received.count < count, let newline = pending.firstIndex(of: "\n") {
                    received.append(String(pending[..<newline]))
                    pending = String(pending[pending.index(after: newline)...])
                }
                if received.count >= count { return received }
                guard let chunk = try await iterator.next() else { return received }
                pending += String(buffer: chunk)
            }
        }
    }

    static func lines(_ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, count: Int) async throws -> [String] {
        var reader = LineReader(inbound)
        return try await reader.next(count)
    }

    /// Fills the queue so that each `queue` reply is about 300 KB, more than a socket buffers.
    func fillQueue() async throws {
        for _ in 0..<20 {
            _ = try await core.enqueue(Array(repeating: "water", count: 100), cue: false, client: "a-client-with-a-rather-long-name-to-make-replies-large")
        }
    }

    /// A client that pipelines requests and never reads used to make the daemon buffer every
    /// reply (1 000 `queue` lines grew it by 900 MB). Its requests now stop being read once a
    /// megabyte of replies waits, and everything is answered, in order, once it reads.
    @Test func aClientThatDoesNotReadStopsBeingRead() async throws {
        try await fillQueue()
        let log = LogCollector()
        try await withServer(log: log) {
            let channel = try await connect()
            try await channel.executeThenClose { inbound, outbound in
                // Each `queue` is followed by a `pick`, which adds one entry: the queue's
                // length tells how many pairs were handled.
                let requests = (1...100).map { Self.request($0.isMultiple(of: 2) ? "pick" : "queue", id: $0) + "\n" }.joined()
                try await outbound.write(ByteBuffer(string: requests))
                await log.waitFor("of replies wait unsent; not reading its requests")
                let handled = await fixture.waiting().count - 2000
                #expect(handled < 10, "\(handled) of 50 pairs handled while the client read nothing")
                let answers = try await Self.lines(inbound, count: 100)
                #expect(answers.count == 100)
                #expect(answers.enumerated().allSatisfy { $1.hasPrefix(#"{"id":\#($0 + 1),"#) }, "in order")
            }
        }
    }

    /// After `shutdown(SHUT_WR)` (socat, `nc -N`), a reply larger than the socket's buffer
    /// used to be cut off when the connection closed.
    @Test func aHalfClosedClientGetsAllOfALargeReply() async throws {
        try await fillQueue()
        let expected = try #require(await RPCDispatcher(core: core).handle(Array(Self.request("queue", id: 1).utf8)).line).count
        #expect(expected > 250_000, "larger than the socket buffer")
        try await withServer {
            let channel = try await connect(halfClose: true)
            let received = try await channel.executeThenClose { inbound, outbound in
                // The `pick` after them adds an entry: once it is there, both are handled.
                try await outbound.write(ByteBuffer(string: [Self.request("queue", id: 1), Self.request("queue", id: 2), Self.request("pick", id: 3)].map { $0 + "\n" }.joined()))
                outbound.finish()
                // Read only once all are handled, as a slow client would: the server is done
                // with the connection before its replies have left.
                while await fixture.waiting().count < 2001 { await Task.yield() }
                var text = ""
                for try await chunk in inbound { text += String(buffer: chunk) }
                return text.split(separator: "\n").map(\.utf8.count)
            }
            #expect(received.count == 3)
            #expect(received.prefix(2) == [expected, expected], "every byte of both replies")
        }
    }

    /// At the connection limit a new client still gets through: the connection idle longest
    /// makes way, unless it follows events.
    @Test func atTheLimitTheConnectionIdleLongestMakesWay() async throws {
        try await withServer(maxConnections: 3) {
            let subscriber = try await connect()
            let oldest = try await connect()
            let newer = try await connect()
            try await subscriber.executeThenClose { subscriberIn, subscriberOut in
                var events = LineReader(subscriberIn)
                try await subscriberOut.write(ByteBuffer(string: Self.request("subscribe", id: 1) + "\n"))
                #expect(try await events.next(1).count == 1)
                let (served, heard) = try await oldest.executeThenClose { oldestIn, _ in
                    try await newer.executeThenClose { newerIn, newerOut in
                        try await newerOut.write(ByteBuffer(string: Self.request("status", id: 1) + "\n"))
                        // Answered, so the server has seen it active: connections accepted
                        // together may be admitted in either order.
                        var answers = LineReader(newerIn)
                        #expect(try await answers.next(1).count == 1)
                        let served = try await exchange([Self.request("status", id: 9)], expecting: 1)
                        return (served, try await Self.lines(oldestIn, count: 1))
                    }
                }
                #expect(served.count == 1, "the fourth connection is served")
                #expect(heard.isEmpty, "the silent one that came first was closed for it")
                core.events.publish(.paused)
                #expect(try await events.next(1).first?.contains(#""method":"paused""#) == true, "the subscriber stays")
            }
        }
    }

    @Test func silentConnectionsAreClosedAfterTheIdleTimeButSubscribersStay() async throws {
        // Long enough that a loaded machine (the whole suite runs at once, with its browsers,
        // brokers and sound servers) still handles the subscription well inside it.
        try await withServer(idleTimeout: .seconds(5)) {
            let silent = try await connect()
            let subscriber = try await connect()
            try await subscriber.executeThenClose { subscriberIn, subscriberOut in
                var events = LineReader(subscriberIn)
                try await subscriberOut.write(ByteBuffer(string: Self.request("subscribe", id: 1) + "\n"))
                #expect(try await events.next(1).count == 1)
                let heard = try await silent.executeThenClose { silentIn, _ in try await Self.lines(silentIn, count: 1) }
                #expect(heard.isEmpty, "closed by the server")
                core.events.publish(.resumed)
                #expect(try await events.next(1).first?.contains(#""method":"resumed""#) == true)
            }
        }
    }
}

extension ControlServerTests {
    /// The socket's mode used to be set without a check: a failure left a socket the group
    /// could not use, silently.
    @Test func aSocketWhoseModeCannotBeSetIsAnError() {
        let missing = fixture.folder.file("gone/control.sock")
        let error = #expect(throws: ControlSocketError.self) { try SocketFile.restrict(missing, group: nil) }
        #expect(error?.message == "cannot set the mode of \(missing) to 0660: no such file")
        #expect(error?.exitCode == 77)
    }
}

extension ControlServerTests {
    /// The socket file used to be made under a private umask held across an `await`: the
    /// umask is the whole process's, so whatever another task created meanwhile (a state file,
    /// an upload) lost its group and other bits. The socket itself is now given its mode.
    @Test func theSocketFileIsMadePrivateWithoutTouchingTheUmask() throws {
        let umaskBefore = try Self.processUmask()
        // Under this umask a socket made without its own mode would be open to others.
        #expect(umaskBefore & 0o077 != 0o077, "the test needs a umask that lets group or other bits through")
        let descriptor = try SocketFile.bindPrivately(path)
        defer { close(descriptor); unlink(path) }
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(try Self.processUmask() == umaskBefore)
        // Bound, so the path is taken; the server listens on it, then opens it to the group.
        let again = #expect(throws: ControlSocketError.self) { _ = try SocketFile.bindPrivately(path) }
        #expect(again?.message == "cannot make the control socket \(path): something else made that file meanwhile; remove it, or choose another --socket")
        #expect(again?.exitCode == 73)
        try SocketFile.restrict(path, group: nil)
        #expect(lstat(path, &info) == 0 && info.st_mode & 0o777 == 0o660)
    }

    @Test func aSocketPathThatIsNotAFilePathIsRefused() throws {
        for bad in ["@jukeboxd", "/tmp/" + String(repeating: "s", count: 103)] {
            let error = #expect(throws: ControlSocketError.self) { _ = try SocketFile.bindPrivately(bad) }
            #expect(error?.message == "control socket path \"\(bad)\" is not a file path of at most 107 bytes; choose another --socket")
            #expect(error?.exitCode == 64)
            // Refused at start-up too, before the daemon restores its queue.
            let early = #expect(throws: ControlSocketError.self) { try SocketFile.prepare(bad) }
            #expect(early?.message == error?.message)
        }
        // At the limit: 107 bytes, the most `sun_path` holds with its NUL.
        let longest = fixture.folder.file(String(repeating: "s", count: 107 - fixture.folder.path.utf8.count - 1))
        #expect(longest.utf8.count == 107)
        let descriptor = try SocketFile.bindPrivately(longest)
        close(descriptor)
        unlink(longest)
    }

    /// A stale socket is replaced; anything else at the path is named and left as it was.
    @Test func onlyAStaleSocketIsRemoved() throws {
        let stale = try SocketFile.bindPrivately(path)
        close(stale)
        try SocketFile.removeStale(path)
        var info = stat()
        #expect(lstat(path, &info) != 0 && errno == ENOENT)
        try fixture.folder.write("control.sock", text: "notes")
        let error = #expect(throws: ControlSocketError.self) { try SocketFile.removeStale(path) }
        #expect(error?.message == "\(path) exists and is not a socket; remove it or choose another --socket")
        #expect(error?.exitCode == 73)
        #expect(try fixture.folder.read("control.sock") == Array("notes".utf8))
    }

    /// The umask, as the kernel reports it (reading it with umask(2) would set it meanwhile).
    static func processUmask() throws -> mode_t {
        let status = String(decoding: try FilePath.read("/proc/self/status", limit: 65_536), as: UTF8.self)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        return try #require(mode_t(String(line.dropFirst("Umask:".count).filter { !$0.isWhitespace }), radix: 8))
    }
}

extension ControlServerTests {
    /// A client that stops sending in the middle of an upload is cut off once the stall
    /// timeout passes, and the part it sent is removed.
    @Test func aStalledUploadIsClosedAndItsPartRemoved() async throws {
        let log = LogCollector()
        let stalling = try await TestCore(log: log)
        let path = stalling.folder.file("stall.sock")
        var logger = Logger(label: "test") { _ in log }
        logger.logLevel = .debug
        let (ready, signal) = AsyncStream.makeStream(of: Void.self)
        // Long enough that an emulated aarch64 build (20 to 30 times slower) sends its 100 bytes
        // well inside it.
        let server = ControlServer(path: path, core: stalling.core, logger: logger, uploadStallTimeout: .seconds(3)) { signal.yield() }
        let running = Task { try await server.run() }
        for await _ in ready { break }
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(unixDomainSocketPath: path) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
        try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"method":"upload","params":{"name":"slow.wav","size":1000}}"# + "\n"))
            var reader = LineReader(inbound)
            #expect(try await reader.next(1) == [#"{"id":1,"jsonrpc":"2.0","result":{"size":1000,"upload":"u1"}}"#])
            try await outbound.write(ByteBuffer(bytes: [UInt8](repeating: 7, count: 100)))
            // Whatever arrived by then: a wait for one count would never end if it were another.
            await log.waitFor("the upload of slow.wav ended after")
        }
        #expect(log.contains("the upload of slow.wav ended after 100 of its 1000 bytes; nothing of it was kept"))
        #expect(log.contains("closing a control connection that sent none of its upload's bytes for 3s"))
        let left = try FileManager.default.contentsOfDirectory(atPath: stalling.folder.path).filter { $0.hasPrefix(".upload-") }
        #expect(left.isEmpty)
        running.cancel()
        try? await running.value
    }
}

