import Glibc
import JukeboxCore
import JukeboxDispatch
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
    /// Bytes of replies a connection may have unsent before its requests stop being read.
    public static let maxUnsentReplyBytes = 1 << 20
    /// Connections served at once. At the limit, a new one takes the place of the one idle
    /// longest that is not subscribed, so a new `jukebox` always gets through; and with the
    /// descriptors it leaves free (`DescriptorLimit.reserve`), clips and state always open.
    public static let defaultMaxConnections = 256
    /// `defaultMaxConnections`, or fewer when the process may open few descriptors: at least
    /// `DescriptorLimit.reserve` stay free for clips, the device, the state file and the journal.
    public static func maxConnections(openFileLimit: Int) -> Int {
        max(4, min(defaultMaxConnections, openFileLimit - DescriptorLimit.reserve))
    }

    /// The process's soft limit on open descriptors.
    public static var openFileLimit: Int { DescriptorLimit.openFiles }

    /// A connection that sends nothing for this long, and is not subscribed, is closed.
    public static let defaultIdleTimeout: Duration = .seconds(600)
    /// A connection that stops sending in the middle of an upload's bytes for this long is
    /// closed, and what it sent is removed.
    public static let defaultUploadStallTimeout: Duration = .seconds(30)

    let path: String
    let group: String?
    let core: Jukebox
    /// What the web remote serves, for `webCA`.
    let webCertificate: WebCertificateBoard
    let logger: Logger
    let maxConnections: Int
    let idleTimeout: Duration
    let uploadStallTimeout: Duration
    /// Called once the socket accepts connections (start-up readiness).
    let onListening: @Sendable () -> Void

    public init(
        path: String, group: String? = nil, core: Jukebox, webCertificate: WebCertificateBoard = WebCertificateBoard(), logger: Logger,
        maxConnections: Int = ControlServer.maxConnections(openFileLimit: ControlServer.openFileLimit), idleTimeout: Duration = ControlServer.defaultIdleTimeout,
        uploadStallTimeout: Duration = ControlServer.defaultUploadStallTimeout, onListening: @escaping @Sendable () -> Void = {}
    ) {
        self.path = path
        self.group = group
        self.core = core
        self.webCertificate = webCertificate
        self.logger = logger
        self.maxConnections = maxConnections
        self.idleTimeout = idleTimeout
        self.uploadStallTimeout = uploadStallTimeout
        self.onListening = onListening
    }

    public func run() async throws {
        // Accepted connections come out as plain channels, each wrapped in an NIOAsyncChannel
        // by its own task; `InboundBuffer` keeps what arrives in between (see there why).
        try SocketFile.removeStale(path)
        let descriptor = try SocketFile.bindPrivately(path)
        defer { unlink(path) }
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            // A client may send its requests and shut its writing side (socat, `nc -N`);
            // it still gets its answers.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .bind(descriptor) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let hold = InboundBuffer()
                    let raw = PendingUploadBytes()
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maxLength: RPCDispatcher.maxLineLength, raw: raw)))
                    try channel.pipeline.syncOperations.addHandler(hold)
                    return AcceptedChannel(channel: channel, hold: hold, raw: raw)
                }
            }
        try SocketFile.restrict(path, group: group)
        logger.info("control socket listening on \(path)")
        onListening()
        let connections = OpenConnections(limit: maxConnections)
        // On shutdown: stop accepting, and close each connection's reading side, so a request
        // being handled is still answered before its connection ends.
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { tasks in
                tasks.addTask { await closeIdleConnections(connections) }
                do {
                    try await server.executeThenClose { inbound in
                        for try await connection in inbound {
                            switch connections.add(connection.channel, now: .now) {
                            case .refused:
                                connection.channel.close(promise: nil)
                                continue
                            case .admitted(let evicted):
                                if let evicted {
                                    logger.notice("\(maxConnections) connections open: closing the one idle longest to let a new one in")
                                    evicted.close(promise: nil)
                                }
                            }
                            tasks.addTask {
                                if let wrapped = try? await connection.wrap() {
                                    await serve(wrapped, name: await connection.userName(), raw: connection.raw, connections: connections)
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
                tasks.cancelAll()
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
            connections.closeAllInputs()
        }
    }

    /// Closes, now and then, every connection that has been silent for `idleTimeout` and is
    /// not subscribed: a client that connects and forgets would otherwise hold its descriptor
    /// for ever. With no connection open it sleeps until one comes, so an idle daemon is not
    /// woken for nothing.
    private func closeIdleConnections(_ connections: OpenConnections) async {
        // Often enough that a stalled upload is closed within a third more than its timeout.
        let interval = min(idleTimeout, uploadStallTimeout / 3, .seconds(60))
        while !Task.isCancelled {
            await connections.waitForAConnection()
            guard (try? await Task.sleep(for: interval)) != nil else { return }
            let now = ContinuousClock.now
            for (channel, uploading) in connections.idle(since: now - idleTimeout, uploadingSince: now - uploadStallTimeout) {
                if uploading {
                    logger.notice("closing a control connection that sent none of its upload's bytes for \(DurationText.format(uploadStallTimeout)); the partial file is removed")
                } else {
                    logger.debug("closing a control connection idle for \(DurationText.format(idleTimeout))")
                }
                channel.close(promise: nil)
            }
        }
    }

    /// Requests are applied as they arrive; a responder sends the replies in order, each one
    /// only after a commit that began after its change. A client that sends many requests at
    /// once thus has them share writes instead of waiting for one write each. Each reply is
    /// written and flushed to the socket before the next, and a connection whose unsent
    /// replies pass `maxUnsentReplyBytes` is not read from until its client reads.
    private func serve(_ connection: NIOAsyncChannel<LineFrameDecoder.Frame, ByteBuffer>, name: String, raw: PendingUploadBytes, connections: OpenConnections) async {
        let handler = RPCDispatcher(core: core, client: name, webCertificate: webCertificate)
        let channel = connection.channel
        let budget = ReplyBudget(limit: Self.maxUnsentReplyBytes)
        do {
            try await connection.executeThenClose { inbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    let (replies, pending) = AsyncStream.makeStream(of: RPCDispatcher.Reply.self)
                    let (written, allWritten) = AsyncStream.makeStream(of: Void.self)
                    tasks.addTask {
                        defer { allWritten.finish() }
                        for await reply in replies {
                            let response = await reply.committed()
                            // Awaiting the write means the bytes reached the socket: nothing
                            // is left in NIO's buffer for the close to drop (a client that
                            // half-closed still gets every byte of a large reply).
                            if let response { try await channel.writeAndFlush(line(response)).get() }
                            await budget.giveBack(reply.line?.count ?? 0)
                        }
                    }
                    var subscribed = false
                    reading: for try await frame in inbound {
                        connections.touch(channel, now: .now)
                        switch frame {
                        case .tooLong:
                            pending.yield(.init(line: RPCCoding.error(.tooLong(limit: RPCDispatcher.maxLineLength), id: nil)))
                            break reading
                        case .raw(let bytes):
                            await handler.uploadBytes(bytes)
                            if raw.pending == 0 { connections.markUploading(channel, false) }
                        case .line(let bytes):
                            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                            let reply = await handler.handleDeferringCommit(bytes)
                            if let count = reply.rawBytes {
                                // Before the answer goes out: the client sends the file after it.
                                raw.expect(count)
                                connections.markUploading(channel, true)
                            }
                            await budget.take(reply.line?.count ?? 0) { [logger] in
                                logger.debug("\(name): over \(Self.maxUnsentReplyBytes / 1024) KB of replies wait unsent; not reading its requests until it reads them")
                            }
                            pending.yield(reply)
                            if reply.subscribe, !subscribed {
                                subscribed = true
                                connections.markSubscribed(channel)
                                let stream = core.events.subscribe()
                                tasks.addTask {
                                    for await event in stream { try await channel.writeAndFlush(line(event.notificationLine)).get() }
                                }
                            }
                        }
                    }
                    // The client is done (or broke the line limit): answer what it asked, then
                    // stop following events too. An upload it did not finish is removed.
                    pending.finish()
                    for await _ in written {}
                    await handler.connectionEnded()
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
