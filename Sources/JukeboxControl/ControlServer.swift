import Glibc
import JukeboxCore
import JukeboxProtocol
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

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
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { tasks in
                do {
                    try await server.executeThenClose { inbound in
                        var connections = 0
                        for try await connection in inbound {
                            connections += 1
                            let name = "client \(connections)"
                            tasks.addTask { await serve(connection, name: name) }
                        }
                    }
                } catch {
                    logger.debug("control socket closed: \(error)")
                }
                tasks.cancelAll()
            }
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
