import Foundation
import JukeboxTestSupport
import Logging
import MQTT
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// The client against a real mosquitto broker, and against a fake one that sends garbage.
@Suite("MQTT client", .timeLimit(.minutes(2)))
struct MQTTClientTests {
    /// Counts the connections the client reports, so a test can wait for the next one.
    final class Connections: Sendable {
        let stream: AsyncStream<Void>
        let continuation: AsyncStream<Void>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self) }
        func next() async -> Bool {
            for await _ in stream { return true }
            return false
        }
    }

    func client(
        port: Int, username: String? = nil, password: String? = nil, firstRetry: Duration = .seconds(1), log: LogCollector, connections: Connections
    ) -> MQTTClient {
        var configuration = MQTTConfiguration(
            // Each test's own client id: a broker drops the older of two clients of one name.
            host: "127.0.0.1", port: port, clientID: "jukeboxd-test-\(UInt32.random(in: 0 ... .max))", username: username, password: password,
            keepAlive: .seconds(30), will: .init(topic: "jb/availability", text: "offline", qos: .atLeastOnce, retain: true),
            subscriptions: [.init("jb/command/#")])
        configuration.firstRetry = firstRetry
        let logger = Logger(label: "mqtt") { _ in log }
        return MQTTClient(configuration: configuration, logger: logger) {
            connections.continuation.yield()
        }
    }

    @Test(.enabled(if: Mosquitto.isInstalled, Comment(rawValue: Mosquitto.missing)))
    func itConnectsSubscribesPublishesAndComesBackAfterTheBrokerRestarts() async throws {
        let mosquitto = try Mosquitto()
        let log = LogCollector()
        let connections = Connections()
        let client = client(port: mosquitto.port, log: log, connections: connections)
        try await mosquitto.run { broker in
            let running = Task { await client.run() }
            defer { running.cancel() }
            #expect(await connections.next())
            #expect(await client.publish(.init(topic: "jb/availability", text: "online", qos: .atLeastOnce, retain: true)), "\(log.lines)")
            #expect(try await mosquitto.messages("jb/availability") == ["online"], "retained, as a new subscriber sees it")
            // Connected means subscribed too: a command published now arrives.
            let received = LogLines()
            let reader = Task { for await message in client.messages {
                await message.acknowledge()
                await received.append("\(message.topic) \(message.text)")
            } }
            defer { reader.cancel() }
            try await mosquitto.publish("jb/command/play", "water")
            #expect(await received.waitFor("jb/command/play water"))

            // The broker goes and comes back on the same port: the client connects again.
            await broker.stop()
            try await broker.start()
            #expect(await connections.next(), "connected again")
            #expect(log.contains("MQTT connected to mqtt://127.0.0.1:\(mosquitto.port)"))
            #expect(await client.publish(.init(topic: "jb/availability", text: "online", qos: .atLeastOnce, retain: true)))

            // Stopping disconnects cleanly: the broker keeps the last will to itself.
            running.cancel()
            await running.value
            let availability = try await mosquitto.messages("jb/availability")
            #expect(availability == ["online"], "the last will was not published: \(availability)")
        }
    }

    @Test(.enabled(if: Mosquitto.isInstalled, Comment(rawValue: Mosquitto.missing)))
    func aConnectionThatDropsPublishesTheLastWill() async throws {
        let mosquitto = try Mosquitto()
        try await mosquitto.run { _ in
            try await mosquitto.publish("jb/availability", "online", retain: true)
            // CONNECT with a will, then the socket closes without DISCONNECT, as when the
            // daemon is killed.
            let connect = MQTTPacket.connect(.init(clientID: "doomed", keepAlive: 30, will: .init(topic: "jb/availability", text: "offline", qos: .atLeastOnce, retain: true)))
            let socket = Loopback.connect(port: mosquitto.port)
            try #require(socket >= 0)
            _ = connect.bytes.withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
            var answer = [UInt8](repeating: 0, count: 4)
            #expect(read(socket, &answer, 4) == 4 && answer == [0x20, 2, 0, 0], "accepted")
            close(socket)
            #expect(try await mosquitto.messages("jb/availability", count: 1) == ["offline"])
        }
    }

    @Test(.enabled(if: Mosquitto.isInstalled, Comment(rawValue: Mosquitto.missing)))
    func wrongCredentialsAreLoggedOnceInWordsAndRetried() async throws {
        let mosquitto = try Mosquitto(users: ["jukebox": "right"])
        let log = LogCollector()
        let connections = Connections()
        let client = client(port: mosquitto.port, username: "jukebox", password: "wrong secret", log: log, connections: connections)
        try await mosquitto.run { _ in
            let running = Task { await client.run() }
            await log.waitFor("refused the connection")
            running.cancel()
            await running.value
        }
        let refusal = log.lines.first { $0.contains("refused the connection") } ?? ""
        #expect(refusal.hasPrefix("MQTT broker mqtt://127.0.0.1:\(mosquitto.port): refused the connection: the broker"), "\(refusal)")
        #expect(refusal.contains("check the session's mqtt username and passwordFile") && refusal.contains("trying again"), "\(refusal)")
        #expect(!log.contains("wrong secret"), "the password is never logged")
        #expect(log.lines.filter { $0.contains("refused") }.count == 1, "\(log.lines)")
    }

    @Test func noBrokerIsLoggedOnceAndRetried() async throws {
        let (held, port) = Loopback.bound()
        defer { close(held) }
        let log = LogCollector()
        let client = client(port: port, log: log, connections: Connections())
        let running = Task { await client.run() }
        await log.waitFor("cannot connect")
        running.cancel()
        await running.value
        #expect(log.contains("cannot connect (connection refused); trying again, at most every 60 s"), "\(log.lines)")
    }

    /// A fake broker that accepts and then sends what no broker may: each time the client
    /// logs the reason, drops the connection and connects again.
    @Test func aBrokerSendingGarbageIsDroppedAndTheClientConnectsAgain() async throws {
        let garbage: [([UInt8], String)] = [
            ([0x30, 0xFF, 0xFF, 0xFF, 0x7F], "it sent a packet of 268435455 bytes, over the 262144 accepted"),
            ([0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "it sent a remaining length longer than four bytes"),
            ([0x32, 3, 0, 9, 97], "it sent a PUBLISH topic longer than its packet"),
            ([0xF0, 0], "it sent a packet of reserved type 15"),
            ([0x20, 2, 0, 0], "it sent a second CONNACK"),
        ]
        // Each connection gets CONNACK and SUBACK, so the client is connected and subscribed,
        // and then the garbage; from a broker on a thread of its own, so the answer is never
        // late for the client's 10 s wait however busy the test process is.
        let broker = ScriptedBroker(answers: garbage.map { [0x20, 2, 0, 0, 0x90, 3, 0, 1, 1] + $0.0 })
        let log = LogCollector()
        let client = client(port: broker.port, firstRetry: .milliseconds(50), log: log, connections: Connections())
        let running = Task { await client.run() }
        var served = broker.served.makeAsyncIterator()
        for (_, reason) in garbage {
            #expect(await served.next() == 0x10, "CONNECT first")
            await log.waitFor("jukeboxd closed its connection to mqtt://127.0.0.1:\(broker.port): \(reason)")
        }
        running.cancel()
        await running.value
        // Every time, the garbage came once the connection was made.
        #expect(log.lines.filter { $0.contains("MQTT connected") }.count == garbage.count, "\(log.lines)")
        let closed = log.lines.filter { $0.contains("closed its connection") }
        #expect(closed.count == garbage.count, "\(log.lines)")
        // A connection that ends at once does not start the waits again: they double.
        #expect(closed.map { $0.components(separatedBy: "connecting again in ").last ?? "" } == ["50 ms", "100 ms", "200 ms", "400 ms", "800 ms"], "\(closed)")
    }

    /// A broker that floods the client while nothing takes its messages: with 100 waiting the
    /// client stops reading, so the rest wait in TCP, and none is dropped. Taken later, all
    /// 300 come in their order, the last (the OFF after a burst of ONs) too; the pause is
    /// logged once.
    @Test func aFloodOfMessagesWaitsAtTheBrokerAndNoneIsDropped() async throws {
        let topic = Array("jb/command/volume".utf8)
        func publish(_ payload: String) -> [UInt8] {
            [0x30, UInt8(2 + topic.count + payload.utf8.count), 0, UInt8(topic.count)] + topic + Array(payload.utf8)
        }
        // CONNACK and SUBACK, 300 messages, then a packet no broker sends, which ends the connection.
        let broker = ScriptedBroker(answers: [[0x20, 2, 0, 0, 0x90, 3, 0, 1, 1] + Array((0..<300).map { publish("\($0)") }.joined()) + [0x60, 0]])
        let log = LogCollector()
        let client = client(port: broker.port, log: log, connections: Connections())
        let running = Task { await client.run() }
        await log.waitFor("MQTT: 100 messages are waiting to be handled; the rest wait at the broker until there is room")
        #expect(!log.contains("closed its connection"), "the connection is held, not read to its end")
        var taken: [String] = []
        for await message in client.messages {
            taken.append(String(decoding: message.payload, as: UTF8.self))
            if taken.count == 300 { break }
        }
        await log.waitFor("jukeboxd closed its connection")
        running.cancel()
        await running.value
        #expect(taken == (0..<300).map { "\($0)" }, "every message, in order")
        #expect(log.lines.filter { $0.contains("are waiting to be handled") }.count == 1, "\(log.lines)")
        #expect(!log.contains("sent nothing"), "a pause for room is not a silent broker")
    }
}
