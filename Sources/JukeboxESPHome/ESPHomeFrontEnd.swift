import ESPHomeAPI
import Glibc
import JukeboxCore
import JukeboxFiles
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Home Assistant's media player: jukeboxd speaks ESPHome's native API on the session's
/// `esphome.listen`, so Home Assistant's ESPHome integration adds it as a device. One NIO
/// channel per client in a discarding task group; a client's handler never throws, so one
/// broken client cannot take the others or the daemon down.
public struct ESPHomeFrontEnd: Service {
    let settings: ESPHomeSettings
    /// Given by tests; else made from the machine's id when the front end starts.
    let identity: DeviceIdentity?
    let core: Jukebox
    let logger: Logger
    let limits: ESPHomeLimits
    /// Called with the port once it listens.
    let onListening: @Sendable (Int) -> Void

    /// A port that is taken is tried again this often; jukeboxd plays on meanwhile.
    static let bindRetry: Duration = .seconds(10)

    public init(
        settings: ESPHomeSettings, identity: DeviceIdentity? = nil, core: Jukebox, logger: Logger, limits: ESPHomeLimits = ESPHomeLimits(),
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.settings = settings
        self.identity = identity
        self.core = core
        self.logger = logger
        self.limits = limits
        self.onListening = onListening
    }

    public func run() async throws {
        // A stop cancels the wait for the port, the listener and every client.
        await cancelWhenGracefulShutdown { await serve() }
    }

    private func serve() async {
        // /etc/machine-id is read on a thread of its own, never on the cooperative pool.
        let identity = if let identity { identity } else {
            await BlockingWorkQueue(label: "jukebox.esphome.identity").run { [settings] in DeviceIdentity(settings: settings) }
        }
        guard let server = await bindWhenFree() else { return }
        let port = server.channel.localAddress?.port ?? settings.port
        let key = settings.encryptionKey == nil ? "without a key, to this machine only" : "with its encryption key"
        logger.info("Home Assistant's media player \"\(identity.friendlyName)\" listening on \(settings.host):\(port), \(key)")
        onListening(port)
        let advertisement = await ESPHomeAdvertisement.start(settings: settings, identity: identity, port: port, logger: logger)
        let clients = ClientCount(limit: limits.maxClients)
        let context = ClientContext(
            settings: settings, identity: identity, core: core, logger: logger, limits: limits, commands: MediaPlayerCommands(core: core),
            refusals: SharedLogBudget(LogBudget(what: "refused Home Assistant connections", maxLines: 20)))
        await withDiscardingTaskGroup { tasks in
            do {
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        guard clients.admit() else {
                            for line in context.refusals.admit("Home Assistant's media player: \(limits.maxClients) clients are connected, the most it serves; closing a new one from \(connection.channel.remoteAddress?.ipAddress ?? "?")") {
                                logger.warning("\(line)")
                            }
                            tasks.addTask { try? await connection.executeThenClose { _, _ in } }
                            continue
                        }
                        tasks.addTask {
                            // A connection that has ended no longer counts, though the media
                            // it asked for may still be being fetched.
                            await ClientHandler(context: context, connection: connection).serve(closed: { clients.leave() })
                        }
                    }
                }
            } catch {
                logger.debug("Home Assistant's media player stopped listening: \(error)")
            }
            tasks.cancelAll()
        }
        await advertisement?.stop()
    }

    /// The listener, once the address can be bound; nil when stopping first.
    private func bindWhenFree() async -> NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>? {
        var told = false
        while !Task.isCancelled {
            do {
                return try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                    // A client that does not read holds at most this much in the kernel, and then
                    // `maxUnsentBytes` in jukeboxd before it is closed (its messages are small).
                    .childChannelOption(.socketOption(.so_sndbuf), value: 64 * 1024)
                    // A client that sends and then shuts its writing side still gets its answers.
                    .childChannelOption(.allowRemoteHalfClosure, value: true)
                    .bind(host: settings.host, port: settings.port) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                        }
                    }
            } catch {
                if !told {
                    told = true
                    logger.warning("Home Assistant's media player cannot listen on \(settings.listen): \(Self.words(error)); jukeboxd plays on and tries again every \(DurationText.format(Self.bindRetry))")
                }
                guard (try? await Task.sleep(for: Self.bindRetry)) != nil else { return nil }
            }
        }
        return nil
    }

    /// Why an address cannot be listened on, in words a user can act on.
    static func words(_ error: any Error) -> String {
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE?: "the port is taken by another program (another jukeboxd, or ESPHome's own dashboard?); choose another port in esphome.listen, or stop that program"
        case EADDRNOTAVAIL?: "the address is not one of this machine's; use 0.0.0.0 for all of them"
        case EACCES?: "a port under 1024 is for root only; use ESPHome's 6053"
        default: "the address cannot be used (\(error is SocketAddressError ? "it is not an address or a name this machine knows" : "the system refused it"))"
        }
    }
}

/// How many clients are connected, within the limit.
final class ClientCount: Sendable {
    private let count = Mutex(0)
    let limit: Int
    init(limit: Int) { self.limit = limit }

    func admit() -> Bool {
        count.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func leave() { count.withLock { $0 -= 1 } }
}

/// What every client's handler shares.
struct ClientContext: Sendable {
    let settings: ESPHomeSettings
    let identity: DeviceIdentity
    let core: Jukebox
    let logger: Logger
    let limits: ESPHomeLimits
    let commands: MediaPlayerCommands
    /// Refused connections and commands: at most 20 lines a minute, then counted.
    let refusals: SharedLogBudget
}
