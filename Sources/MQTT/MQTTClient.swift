#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Where and how to connect.
public struct MQTTConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var clientID: String
    public var username: String?
    public var password: String?
    /// A PINGREQ goes out when nothing else has for this long; a broker silent for 1.5 times
    /// this is taken as gone.
    public var keepAlive: Duration
    /// Published by the broker when the connection drops without a DISCONNECT.
    public var will: MQTTPacket.Publish?
    /// Subscribed again on every connection.
    public var subscriptions: [MQTTPacket.Subscription]
    /// The wait before the first attempt after a failure; it doubles with each failure in a
    /// row, up to `MQTTClient.maxBackoff`.
    public var firstRetry: Duration = .seconds(1)

    public init(
        host: String, port: Int = 1883, clientID: String, username: String? = nil, password: String? = nil,
        keepAlive: Duration = .seconds(60), will: MQTTPacket.Publish? = nil, subscriptions: [MQTTPacket.Subscription] = []
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.username = username
        self.password = password
        self.keepAlive = keepAlive
        self.will = will
        self.subscriptions = subscriptions
    }

    /// The broker as people write it: `mqtt://host:port`, `host:port` or `host`.
    public var broker: String { "mqtt://\(host):\(port)" }
}

/// A small MQTT 3.1.1 client: it connects, subscribes, keeps the connection alive and, when it
/// drops or cannot be made, tries again after 1, 2, 4… s, at most `maxBackoff` apart, for as
/// long as `run()` runs. Messages that arrive go to `messages`; `publish` sends while
/// connected and drops what it cannot send (state is published again on every connection,
/// through `onConnected`). Nothing the broker sends can do more than close the connection.
public actor MQTTClient {
    public static let maxBackoff: Duration = .seconds(60)
    /// A connection that lasted this long was a good one: the next attempt waits the first
    /// retry again.
    public static let stableConnection: Duration = .seconds(60)
    /// Received messages not yet taken from `messages`; with this many waiting the connection
    /// is not read (the rest wait in TCP and at the broker), so a flood from the broker
    /// cannot grow memory and nothing is dropped.
    public static let messageBuffer = 100
    /// How long the broker has to answer CONNECT and SUBSCRIBE.
    public static let answerTimeout: Duration = .seconds(10)

    public nonisolated let configuration: MQTTConfiguration
    public nonisolated let messages: MQTTMessages
    private let logger: Logger
    private let onConnected: @Sendable () async -> Void
    /// The connection's writer while connected.
    private var writer: NIOAsyncChannelOutboundWriter<ByteBuffer>?
    private var nextPacketID: UInt16 = 0
    /// Whether the last attempt failed, so a broker that stays away is logged once.
    private var failing = false
    /// QoS 1 messages sent with `publishAcknowledged`, by packet id, waiting for PUBACK.
    /// Each with the task that sends it and then gives up on it after `answerTimeout`,
    /// cancelled once the answer comes.
    private var awaitingAcknowledgement: [UInt16: (answer: CheckedContinuation<Bool, Never>, timeout: Task<Void, Never>)] = [:]
    /// At most this many wait at once; past it `publishAcknowledged` answers false at once.
    public static let maxAwaitingAcknowledgement = 32

    /// `onConnected` runs on every connection, once the broker has accepted it and the
    /// subscriptions are in place.
    public init(configuration: MQTTConfiguration, logger: Logger, onConnected: @escaping @Sendable () async -> Void = {}) {
        self.configuration = configuration
        self.logger = logger
        self.onConnected = onConnected
        messages = MQTTMessages(capacity: Self.messageBuffer)
    }

    public var isConnected: Bool { writer != nil }

    /// Sends `message` if connected (QoS 1 gets a packet id); returns whether it was handed to
    /// the connection.
    @discardableResult
    public func publish(_ message: MQTTPacket.Publish) async -> Bool {
        guard let writer else { return false }
        var message = message
        if message.qos == .atLeastOnce { message.packetID = packetID() }
        do {
            try await writer.write(ByteBuffer(bytes: MQTTPacket.publish(message).bytes))
            return true
        } catch {
            return false
        }
    }

    /// Sends `message` at QoS 1 and returns true once the broker has acknowledged it
    /// (PUBACK); false when not connected, when the connection ends first, or after
    /// `answerTimeout`. What the broker acknowledged it keeps for its subscribers.
    public func publishAcknowledged(_ message: MQTTPacket.Publish) async -> Bool {
        guard let writer, awaitingAcknowledgement.count < Self.maxAwaitingAcknowledgement else { return false }
        var message = message
        message.qos = .atLeastOnce
        let id = packetID()
        message.packetID = id
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let timeout = Task {
                do {
                    try await writer.write(ByteBuffer(bytes: MQTTPacket.publish(message).bytes))
                    try await Task.sleep(for: Self.answerTimeout)
                } catch {
                    // Not sent, or answered (cancelled): `acknowledged` finds it gone then.
                }
                self.acknowledged(id, false)
            }
            awaitingAcknowledgement[id] = (continuation, timeout)
        }
    }

    /// The broker acknowledged packet `id` (or it never will: `acknowledged` false).
    private func acknowledged(_ id: UInt16, _ acknowledged: Bool = true) {
        guard let waiting = awaitingAcknowledgement.removeValue(forKey: id) else { return }
        waiting.timeout.cancel()
        waiting.answer.resume(returning: acknowledged)
    }

    /// The connection ended: nothing sent on it will be acknowledged now.
    private func connectionEnded() {
        writer = nil
        let waiting = awaitingAcknowledgement
        awaitingAcknowledgement = [:]
        for entry in waiting.values {
            entry.timeout.cancel()
            entry.answer.resume(returning: false)
        }
    }

    private func packetID() -> UInt16 {
        nextPacketID = nextPacketID == .max ? 1 : nextPacketID + 1
        return nextPacketID
    }

    /// Connects and reconnects until cancelled; on cancellation it disconnects cleanly (so the
    /// broker does not publish the last will).
    public func run() async {
        var backoff = configuration.firstRetry
        while !Task.isCancelled {
            let started = ContinuousClock.now
            let outcome = await connection()
            if Task.isCancelled { break }
            // Only a connection that stayed up a while starts the backoff again: one that a
            // broker (or what it hands out) ends at once must not bring a reconnection, and
            // everything published on it, every second for ever.
            if ContinuousClock.now - started > Self.stableConnection { backoff = configuration.firstRetry }
            switch outcome {
            case .refused(let reason), .failed(let reason):
                if !failing {
                    logger.warning("MQTT broker \(configuration.broker): \(reason); trying again, at most every \(Self.maxBackoff.components.seconds) s", metadata: ["broker": "\(configuration.broker)"])
                } else {
                    logger.debug("MQTT broker \(configuration.broker): \(reason)")
                }
                failing = true
            case .closed(let reason):
                logger.warning("MQTT broker \(configuration.broker) closed the connection: \(reason); connecting again in \(Self.words(for: backoff))", metadata: ["broker": "\(configuration.broker)"])
            case .dropped(let reason):
                logger.warning("MQTT: jukeboxd closed its connection to \(configuration.broker): \(reason); connecting again in \(Self.words(for: backoff))", metadata: ["broker": "\(configuration.broker)"])
            }
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, Self.maxBackoff)
        }
        messages.finish()
    }

    private enum Outcome {
        /// The broker answered CONNECT with a refusal.
        case refused(String)
        /// No connection was made.
        case failed(String)
        /// A connection was made and then ended, by the broker or the network.
        case closed(String)
        /// A connection was made, and this client ended it: the broker broke the protocol.
        case dropped(String)
    }

    private func connection() async -> Outcome {
        let channel: NIOAsyncChannel<MQTTPacket, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(10))
                .connect(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(MQTTFrameDecoder()))
                        return try NIOAsyncChannel<MQTTPacket, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            return .failed("cannot connect (\(Self.words(for: error)))")
        }
        do {
            return try await channel.executeThenClose { inbound, outbound in
                try await session(inbound: inbound, outbound: outbound)
            }
        } catch let error as MQTTProtocolError {
            return .dropped(Self.words(for: error))
        } catch {
            return .closed(Self.words(for: error))
        }
    }

    private func session(inbound: NIOAsyncChannelInboundStream<MQTTPacket>, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws -> Outcome {
        let connect = MQTTPacket.connect(.init(
            clientID: configuration.clientID, keepAlive: UInt16(min(configuration.keepAlive.components.seconds, 65535)),
            username: configuration.username, password: configuration.password, will: configuration.will))
        try await outbound.write(ByteBuffer(bytes: connect.bytes))
        let (connected, signal) = AsyncStream.makeStream(of: Void.self)
        defer {
            signal.finish()
            connectionEnded()
        }
        let keepAlive = configuration.keepAlive
        let heard = Heard()
        @Sendable func send(_ packet: MQTTPacket) async throws { try await outbound.write(ByteBuffer(bytes: packet.bytes)) }
        return await withThrowingTaskGroup(of: Outcome?.self) { group in
            // CONNACK in time; then PINGREQ when idle, and a broker silent for 1.5 keep-alives is gone.
            group.addTask {
                try await Task.sleep(for: Self.answerTimeout)
                guard heard.accepted else { return .failed("no answer to CONNECT within \(Self.answerTimeout.components.seconds) s") }
                while true {
                    try await Task.sleep(for: keepAlive / 2)
                    if heard.since > keepAlive * 3 / 2 { return .dropped("it sent nothing for \((keepAlive * 3 / 2).components.seconds) s") }
                    // Held, the broker still hears from us, or it would take us for gone.
                    if heard.held || heard.since >= keepAlive / 2 { try await send(.pingRequest) }
                }
            }
            group.addTask { [messages, logger, signal, subscriptions = configuration.subscriptions] in
                // A pause for room is logged at most once a minute, so a long burst writes
                // one line.
                var pauseLoggedAt: ContinuousClock.Instant?
                for try await packet in inbound {
                    heard.touch()
                    guard heard.accepted else {
                        switch packet {
                        case .connectionAccepted:
                            heard.accept()
                            try await self.didConnect(outbound)
                            // Ready once subscribed (SUBACK), so nothing sent to it is missed.
                            if subscriptions.isEmpty { signal.yield() }
                            continue
                        case .connectionRefused(let code): return .refused("refused the connection: \(code)")
                        default: return .failed("answered CONNECT with something other than CONNACK")
                        }
                    }
                    switch packet {
                    case .publish(let message):
                        // A QoS 1 message is acknowledged once its owner has handled it.
                        let acknowledge: @Sendable () async -> Void = { [id = message.packetID] in
                            if let id { try? await send(.publishAcknowledged(packetID: id)) }
                        }
                        if messages.isFull {
                            if pauseLoggedAt.map({ ContinuousClock.now - $0 >= .seconds(60) }) ?? true {
                                logger.notice("MQTT: \(Self.messageBuffer) messages are waiting to be handled; the rest wait at the broker until there is room")
                                pauseLoggedAt = .now
                            }
                            // Not reading is not the broker going silent.
                            heard.hold(true)
                        }
                        let taken = await messages.put(MQTTMessage(publish: message, acknowledge: acknowledge))
                        heard.hold(false)
                        guard taken else { return .closed("stopped") }
                    case .subscribeAcknowledged(_, let granted):
                        for (subscription, qos) in zip(subscriptions, granted) where qos == nil {
                            logger.warning("the MQTT broker refused the subscription to \(subscription.filter) (check its ACL)")
                        }
                        signal.yield()
                    case .publishAcknowledged(let id): await self.acknowledged(id)
                    case .pingResponse: break
                    case .connectionAccepted, .connectionRefused: return .dropped("it sent a second CONNACK")
                    default: return .dropped("it sent a packet a broker does not send")
                    }
                }
                return heard.accepted ? .closed("the connection ended") : .failed("the connection ended before CONNACK")
            }
            // What the owner does on each connection (publishing its state), beside the rest.
            group.addTask { [onConnected] in
                for await _ in connected {
                    await onConnected()
                    break
                }
                return nil
            }
            defer { group.cancelAll() }
            var outcome = Outcome.closed("stopped")
            do {
                while let result = try await group.next() {
                    if let result {
                        outcome = result
                        break
                    }
                }
            } catch let error as MQTTProtocolError {
                outcome = .dropped(Self.words(for: error))
            } catch {
                outcome = .closed(Self.words(for: error))
            }
            // Stopping: a clean DISCONNECT, so the broker keeps the last will to itself. (The
            // writer refuses writes from a cancelled task, so it is sent from one that is not.)
            if Task.isCancelled { await Task { await Self.bounded(Self.goodbyeTimeout) { try? await send(.disconnect) } }.value }
            return outcome
        }
    }

    private func didConnect(_ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws {
        if failing { logger.info("MQTT broker \(configuration.broker) reached", metadata: ["broker": "\(configuration.broker)"]) }
        failing = false
        logger.info("MQTT connected to \(configuration.broker) as \(configuration.clientID)", metadata: ["broker": "\(configuration.broker)"])
        writer = outbound
        if !configuration.subscriptions.isEmpty {
            try await outbound.write(ByteBuffer(bytes: MQTTPacket.subscribe(packetID: packetID(), topics: configuration.subscriptions).bytes))
        }
    }

    /// How long stopping waits to say goodbye (DISCONNECT) to a broker that does not read.
    public static let goodbyeTimeout: Duration = .seconds(2)

    /// Runs `operation`, giving up on it after `limit`.
    public static func bounded(_ limit: Duration, _ operation: @escaping @Sendable () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await operation() }
            group.addTask { try? await Task.sleep(for: limit) }
            _ = await group.next()
            group.cancelAll()
        }
    }

    /// `1 s`, `4 s`, or `250 ms` below a second.
    static func words(for wait: Duration) -> String {
        wait < .seconds(1) ? "\(wait.components.attoseconds / 1_000_000_000_000_000) ms" : "\(wait.components.seconds) s"
    }

    /// An error as a person reads it: a broker's protocol fault, or the system's words, never
    /// NIO's type names.
    static func words(for error: any Error) -> String {
        switch error {
        case let error as MQTTProtocolError: return "it sent \(error.reason)"
        case let error as IOError: return String(cString: strerror(error.errnoCode)).lowercased()
        case let error as NIOConnectionError:
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty { return "the name cannot be resolved" }
            return error.connectionErrors.first.map { words(for: $0.error) } ?? "no address to connect to"
        case ChannelError.connectTimeout: return "no answer within 10 s"
        case is ChannelError: return "the connection was lost"
        default: return "the connection was lost"
        }
    }
}

/// A message from the broker. Call `acknowledge()` once it is handled (for QoS 1, that sends
/// PUBACK; a broker sends an unacknowledged message again if the session survives).
public struct MQTTMessage: Sendable {
    public var publish: MQTTPacket.Publish
    public var acknowledge: @Sendable () async -> Void

    public var topic: String { publish.topic }
    public var payload: [UInt8] { publish.payload }
    public var text: String { String(decoding: publish.payload, as: UTF8.self) }
}

/// When the broker was last heard from, and whether it has accepted the connection.
private final class Heard: Sendable {
    private let state = Mutex((last: ContinuousClock.now, accepted: false, held: false))
    func touch() { state.withLock { $0.last = .now } }
    func accept() { state.withLock { $0.accepted = true } }
    /// While the connection is not read for want of room, the broker's answers wait unread:
    /// the silence is ours, and ends counting from when reading goes on.
    func hold(_ held: Bool) {
        state.withLock {
            $0.held = held
            $0.last = .now
        }
    }
    var accepted: Bool { state.withLock { $0.accepted } }
    var held: Bool { state.withLock { $0.held } }
    var since: Duration { state.withLock { $0.held ? .zero : ContinuousClock.now - $0.last } }
}

/// `MQTTPacketDecoder` in a channel pipeline.
struct MQTTFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = MQTTPacket
    let decoder = MQTTPacketDecoder()

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let packet = try decoder.next(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(packet))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}
