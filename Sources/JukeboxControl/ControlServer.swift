import Glibc
import JukeboxCore
import JukeboxProtocol
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The JSON-RPC control socket: one NIO async channel per client in a discarding task group.
/// A connection's handler never throws, so one broken client cannot take the server down,
/// and a client that never reads only blocks its own connection.
public struct ControlServer: Service {
    let path: String
    let group: String?
    let control: any JukeboxControlling
    let logger: Logger
    /// Called once the socket accepts connections (start-up readiness).
    let onListening: @Sendable () -> Void

    public init(
        path: String, group: String? = nil, control: any JukeboxControlling, logger: Logger,
        onListening: @escaping @Sendable () -> Void = {}
    ) {
        self.path = path
        self.group = group
        self.control = control
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        // Accepted connections come out as plain channels, each wrapped in an NIOAsyncChannel
        // by its own task; `InboundHold` keeps what arrives in between (see there why).
        let server = try await SocketFile.withPrivateCreation { try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            // A client may send its requests and shut its writing side (socat, `nc -N`);
            // it still gets its answers.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let hold = InboundHold()
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maxLength: ControlHandler.maxLineLength)))
                    try channel.pipeline.syncOperations.addHandler(hold)
                    return AcceptedChannel(channel: channel, hold: hold)
                }
            } }
        defer { unlink(path) }
        try SocketFile.restrict(path, group: group)
        logger.info("control socket listening on \(path)")
        onListening()
        let connections = OpenConnections()
        // On shutdown: stop accepting, and close each connection's reading side, so a request
        // being handled is still answered before its connection ends.
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { tasks in
                do {
                    try await server.executeThenClose { inbound in
                        var count = 0
                        for try await connection in inbound {
                            count += 1
                            let name = "client \(count)"
                            tasks.addTask {
                                guard connections.add(connection.channel) else {
                                    connection.channel.close(promise: nil)
                                    return
                                }
                                if let wrapped = try? await connection.wrap() {
                                    await serve(wrapped, name: name)
                                } else {
                                    connection.channel.close(promise: nil)
                                }
                                connections.remove(connection.channel)
                            }
                        }
                    }
                } catch {
                    logger.debug("control socket closed: \(error)")
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
            connections.closeAllInputs()
        }
    }

    /// Requests are applied as they arrive; a responder sends the replies in order, each one
    /// only after a commit that began after its change. A client that sends many requests at
    /// once thus has them share writes instead of waiting for one write each.
    private func serve(_ connection: NIOAsyncChannel<LineFrameDecoder.Frame, ByteBuffer>, name: String) async {
        let handler = ControlHandler(control: control, client: name)
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    let (replies, pending) = AsyncStream.makeStream(of: ControlHandler.Reply.self)
                    let (written, allWritten) = AsyncStream.makeStream(of: Void.self)
                    tasks.addTask {
                        defer { allWritten.finish() }
                        for await reply in replies {
                            var response = reply.line
                            if let mark = reply.commitMark {
                                do {
                                    try await control.commit(through: mark)
                                } catch {
                                    logger.error("\(error)")
                                    response = reply.lineIfCommitFails
                                }
                            }
                            if let response { try await outbound.write(line(response)) }
                        }
                    }
                    var subscribed = false
                    reading: for try await frame in inbound {
                        switch frame {
                        case .tooLong:
                            pending.yield(.init(line: RPCCoding.error(.tooLong(limit: ControlHandler.maxLineLength), id: nil)))
                            break reading
                        case .line(let bytes):
                            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                            let reply = await handler.handleDeferringCommit(bytes)
                            pending.yield(reply)
                            if reply.subscribe, !subscribed {
                                subscribed = true
                                let stream = control.events.subscribe()
                                tasks.addTask {
                                    for await event in stream { try await outbound.write(line(event.notificationLine)) }
                                }
                            }
                        }
                    }
                    // The client is done (or broke the line limit): answer what it asked, then
                    // stop following events too.
                    pending.finish()
                    for await _ in written {}
                    tasks.cancelAll()
                }
            }
        } catch {
            logger.debug("\(name): connection ended: \(error)")
        }
    }

    private func line(_ bytes: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(bytes.count + 1)
        buffer.writeBytes(bytes)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }
}

/// A client connection as accepted, before its async wrapper exists.
struct AcceptedChannel: Sendable {
    let channel: any Channel
    let hold: NIOLoopBound<InboundHold>

    init(channel: any Channel, hold: InboundHold) {
        self.channel = channel
        self.hold = NIOLoopBound(hold, eventLoop: channel.eventLoop)
    }

    /// Wraps the channel for async use and releases what the hold kept to the wrapper.
    func wrap() async throws -> NIOAsyncChannel<LineFrameDecoder.Frame, ByteBuffer> {
        try await channel.eventLoop.submit { [channel, hold] in
            let wrapped = try NIOAsyncChannel<LineFrameDecoder.Frame, ByteBuffer>(wrappingChannelSynchronously: channel)
            channel.pipeline.syncOperations.removeHandler(hold.value, promise: nil)
            return wrapped
        }.get()
    }
}

/// The live client connections, so shutdown can close their reading sides.
final class OpenConnections: Sendable {
    private let channels = Mutex<(open: [ObjectIdentifier: any Channel], closing: Bool)>(([:], false))

    /// False once shutdown has begun: the connection is then closed instead of served.
    func add(_ channel: any Channel) -> Bool {
        channels.withLock { state in
            if !state.closing { state.open[ObjectIdentifier(channel)] = channel }
            return !state.closing
        }
    }

    func remove(_ channel: any Channel) {
        _ = channels.withLock { $0.open.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    func closeAllInputs() {
        let open = channels.withLock { state in
            state.closing = true
            return Array(state.open.values)
        }
        for channel in open { channel.close(mode: .input, promise: nil) }
    }
}
