import JukeboxDuckTarget
import NIOCore
import NIOPosix

/// One short conversation with a player's control port, line by line: connect, send, read the
/// answer, close. Everything it does is bounded: the whole conversation by `timeout` (a player
/// that holds the connection costs that long, once), a line by `maxLine` bytes, and an answer
/// by `maxAnswer`, so a player that answers garbage or without end neither stalls the daemon
/// nor grows its memory.
struct LineExchange {
    static let timeout: Duration = .seconds(1)
    static let maxLine = 16_384
    static let maxAnswer = 1 << 20

    /// Talks to `address`: `body` sends lines and reads them through the `Lines` it is given.
    static func run<T: Sendable>(_ address: PlayerAddress, timeout: Duration = timeout, _ body: @escaping @Sendable (Lines) async throws -> T) async throws -> T {
        try await within(timeout) {
            let channel = try await connect(address)
            return try await channel.executeThenClose { inbound, outbound in
                try await body(Lines(inbound: inbound.makeAsyncIterator(), outbound: outbound))
            }
        }
    }

    /// `body`, given up on after `limit` ("did not answer within …").
    static func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw PlayerProblem("did not answer within \(Self.words(limit))")
            }
            return value
        }
    }

    /// A time limit in words, as the session writes one: "1s", "1.5s".
    static func words(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)s" }
        let tenths = (milliseconds + 50) / 100
        return "\(tenths / 10).\(tenths % 10)s"
    }

    private static func connect(_ address: PlayerAddress) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(.seconds(1))
        let wrap: @Sendable (Channel) -> EventLoopFuture<NIOAsyncChannel<ByteBuffer, ByteBuffer>> = { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
        do {
            switch address {
            case .tcp(let host, let port):
                // An address given as numbers is connected to as it is: a name is looked up
                // first (getaddrinfo on a thread of its own, then both families tried).
                if let numeric = try? SocketAddress(ipAddress: host, port: port) {
                    return try await bootstrap.connect(to: numeric, channelInitializer: wrap)
                }
                return try await bootstrap.connect(host: host, port: port, channelInitializer: wrap)
            case .unix(let path): return try await bootstrap.connect(unixDomainSocketPath: path, channelInitializer: wrap)
            }
        } catch {
            throw PlayerProblem.cannotConnect(error)
        }
    }

    /// The lines of one conversation.
    final class Lines: @unchecked Sendable {
        private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
        private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
        private var pending: [UInt8] = []
        private var read = 0

        init(inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) {
            self.inbound = inbound
            self.outbound = outbound
        }

        func send(_ line: String) async throws {
            try await outbound.write(ByteBuffer(string: line + "\n"))
        }

        /// The next line, without its line break.
        func next() async throws -> [UInt8] {
            while true {
                if let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    var line = Array(pending[..<end])
                    pending.removeFirst(end + 1)
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    return line
                }
                guard pending.count <= LineExchange.maxLine else { throw PlayerProblem("sent a line longer than \(LineExchange.maxLine) bytes") }
                guard let buffer = try await inbound.next() else { throw PlayerProblem("closed the connection") }
                read += buffer.readableBytes
                guard read <= LineExchange.maxAnswer else { throw PlayerProblem("sent more than \(LineExchange.maxAnswer) bytes") }
                pending += buffer.readableBytesView
            }
        }

        func nextText() async throws -> String { String(decoding: try await next(), as: UTF8.self) }
    }
}

/// Why a player could not be reached or refused, in words for the log.
struct PlayerProblem: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }

    static func cannotConnect(_ error: any Error) -> PlayerProblem {
        if let connection = error as? NIOConnectionError, let first = connection.connectionErrors.first?.error {
            return cannotConnect(first)
        }
        if let connection = error as? NIOConnectionError, connection.dnsAAAAError != nil || connection.dnsAError != nil {
            return PlayerProblem("its host name could not be looked up")
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case 111: return PlayerProblem("refused the connection: is it running?")
            case 2: return PlayerProblem("its socket is not there: is it running?")
            case 13: return PlayerProblem("its socket may not be opened by this user")
            default: break
            }
        }
        if error is ChannelError { return PlayerProblem("could not be connected to within a second") }
        return PlayerProblem("could not be connected to")
    }
}
