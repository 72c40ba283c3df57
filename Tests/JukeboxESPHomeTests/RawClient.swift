import ESPHomeAPI
import Glibc
import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxESPHome
import JukeboxTestSupport
import Logging
import NIOCore
import NIOPosix

/// A client of ESPHome's API in plaintext, over real TCP: frames out, frames in, and the
/// server's close seen as the end of its frames.
final class RawClient {
    private var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var reader = ESPHomeFrameReader()

    init(_ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) {
        iterator = inbound.makeAsyncIterator()
        self.outbound = outbound
    }

    func send(_ type: UInt16, _ data: [UInt8] = []) async throws {
        try await sendBytes(ESPHomeFrameWriter.plaintext(type: type, data: data))
    }

    func sendBytes(_ bytes: [UInt8]) async throws {
        try await outbound.write(ByteBuffer(bytes: bytes))
    }

    /// The next message's type; nil once the server has closed the connection (a reset,
    /// when it closed with bytes unread, is a close too).
    func next() async throws -> UInt16? {
        try await nextMessage()?.type
    }

    /// The next message; nil once the server has closed the connection.
    func nextMessage() async throws -> (type: UInt16, data: [UInt8])? {
        while true {
            if case .plaintext(let type, let data)? = try reader.next() { return (type, data) }
            let buffer: ByteBuffer?
            do {
                buffer = try await iterator.next()
            } catch let error as IOError where error.errnoCode == ECONNRESET {
                return nil
            }
            guard let buffer else { return nil }
            reader.append(buffer.readableBytesView)
        }
    }

    /// Reads until the server closes the connection; the types read before it.
    func untilClosed() async throws -> [UInt16] {
        var types: [UInt16] = []
        while let type = try await next() { types.append(type) }
        return types
    }

    /// Says hello, and returns the type of the answer.
    func hello() async throws -> UInt16? {
        try await send(ESPHomeMessageType.helloRequest)
        return try await next()
    }

    /// `receiveBuffer`: the socket's receive buffer, small for a client that is not to read.
    static func with<T: Sendable>(port: Int, receiveBuffer: Int? = nil, _ body: (RawClient) async throws -> T) async throws -> T {
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let receiveBuffer { bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(receiveBuffer)) }
        let channel = try await bootstrap
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        return try await channel.executeThenClose { inbound, outbound in try await body(RawClient(inbound, outbound)) }
    }

    /// `count` clients at once, each connected after the one before.
    static func with<T: Sendable>(port: Int, count: Int, _ body: ([RawClient]) async throws -> T) async throws -> T {
        func open(_ clients: [RawClient]) async throws -> T {
            guard clients.count < count else { return try await body(clients) }
            return try await with(port: port) { client in try await open(clients + [client]) }
        }
        return try await open([])
    }
}

/// The media player's front end over a real core (`TestCore`), listening on a free loopback
/// port in plaintext, with the limits a test gives.
struct FrontEndRig {
    let log = LogCollector()

    func run<T: Sendable>(
        limits: ESPHomeLimits = ESPHomeLimits(), mediaFetcher: (any MediaFetcher)? = nil, _ body: @Sendable (Int, TestCore) async throws -> T
    ) async throws -> T {
        let test = try await TestCore(state: .saved, mediaFetcher: mediaFetcher)
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let frontEnd = ESPHomeFrontEnd(
            settings: ESPHomeSettings(host: "127.0.0.1", port: 0, encryptionKey: nil, name: "Test speaker"), core: test.core,
            logger: Logger(label: "esphome") { [log] _ in log }, limits: limits, onListening: { listening.yield($0) })
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await frontEnd.run()
                return nil
            }
            var portIterator = ports.makeAsyncIterator()
            guard let port = await portIterator.next() else { throw CancellationError() }
            let result = try await body(port, test)
            group.cancelAll()
            return result
        }
    }
}
