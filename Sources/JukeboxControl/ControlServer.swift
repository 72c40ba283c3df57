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
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            // A client may send its requests and shut its writing side (socat, `nc -N`);
            // it still gets its answers.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maxLength: ControlHandler.maxLineLength)))
                    return try NIOAsyncChannel<LineFrameDecoder.Frame, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
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
                                guard connections.add(connection.channel) else { return }
                                await serve(connection, name: name)
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

    private func serve(_ connection: NIOAsyncChannel<LineFrameDecoder.Frame, ByteBuffer>, name: String) async {
        let handler = ControlHandler(control: control, client: name)
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await withThrowingDiscardingTaskGroup { events in
                    var subscribed = false
                    for try await frame in inbound {
                        switch frame {
                        case .tooLong:
                            try await outbound.write(line(RPCCoding.error(.tooLong(limit: ControlHandler.maxLineLength), id: nil)))
                            return
                        case .line(let bytes):
                            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                            let reply = await handler.handle(bytes)
                            if let response = reply.line { try await outbound.write(line(response)) }
                            if reply.subscribe, !subscribed {
                                subscribed = true
                                let stream = control.events.subscribe()
                                events.addTask {
                                    for await event in stream { try await outbound.write(line(event.notificationLine)) }
                                }
                            }
                        }
                    }
                    // The client closed its side: stop following events too.
                    events.cancelAll()
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

/// The live client connections, so shutdown can close their reading sides.
final class OpenConnections: Sendable {
    private let channels = Mutex<(open: [ObjectIdentifier: any Channel], closing: Bool)>(([:], false))

    /// False once shutdown has begun: the connection is closed instead of served.
    func add(_ channel: any Channel) -> Bool {
        let accepted = channels.withLock { state in
            if !state.closing { state.open[ObjectIdentifier(channel)] = channel }
            return !state.closing
        }
        if !accepted { channel.close(promise: nil) }
        return accepted
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
