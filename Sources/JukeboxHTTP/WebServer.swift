import Hummingbird
import HummingbirdCore
import JukeboxDispatch
import JukeboxCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The web front end as one more service of the daemon: Hummingbird's HTTP/1 server on the
/// configured address, shut down with the rest.
public struct WebServer: Service {
    /// A client that sends nothing of its request for this long is disconnected.
    public static let idleTimeout: TimeAmount = .seconds(30)
    /// HTTP connections served at once; more wait to be accepted. At most a quarter of the
    /// descriptors the control socket may use, so a flood of web clients can neither take
    /// the socket's place nor leave clips, the device or the state file without descriptors.
    public static func maxConnections(openFileLimit: Int) -> Int {
        max(4, min(256, (openFileLimit - DescriptorLimit.reserve) / 4))
    }

    let settings: WebSettings
    let core: Core
    let auth: WebAuth
    let logger: Logger
    let onListening: @Sendable (Int) async -> Void

    /// `password` nil is allowed only on a loopback address (the daemon checks at start-up).
    /// Browsers' sessions are kept in `sessionsFile`, so they outlive a restart.
    public init(
        settings: WebSettings, password: String?, sessionsFile: String?, core: Core, logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.settings = settings
        self.core = core
        self.auth = WebAuth(password: password, sessionsFile: sessionsFile, logger: logger)
        self.logger = logger
        self.onListening = onListening
    }

    /// Where a daemon whose state file is `statePath` keeps the web remote's sessions.
    public static func sessionsFile(besideState statePath: String) -> String {
        StateFile.sibling(of: statePath, ".web-sessions")
    }

    public func run() async throws {
        await auth.restore()
        let api = WebAPI(core: core, auth: auth, hosts: WebHosts(settings: settings), logger: logger)
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .notice)
        // Hummingbird's HTTP/1 server without its `Application`, which adds a date cache that
        // wakes the daemon once a second for as long as it runs (about 360 context switches a
        // minute while idle); the Date header is made per response instead.
        let total = Self.maxConnections(openFileLimit: DescriptorLimit.openFiles)
        let perAddress = ConnectionsPerAddress(limit: ConnectionsPerAddress.limit(serving: total), logger: logger)
        let configuration = HTTP1Channel.Configuration(additionalChannelHandlers: [AddressLimitHandler(perAddress)], idleTimeout: Self.idleTimeout)
        let server = try HTTPServerBuilder.http1(configuration: configuration).buildServer(
            configuration: ServerConfiguration(
                address: .hostname(settings.host, port: settings.port), serverName: "jukeboxd", reuseAddress: true,
                availableConnectionsDelegate: WebConnectionLimit(limit: total, logger: logger)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: quiet,
            responder: { [quiet] request, writer, channel in
                var response = await api.respond(to: request, context: WebContext(source: .init(channel: channel, logger: quiet)))
                response.headers[.date] = HTTPDate.now()
                response.headers[.server] = "jukeboxd"
                try await writer.write(response: response.head, body: response.body)
            },
            onServerRunning: { [settings, logger, onListening] channel in
                let port = channel.localAddress?.port ?? settings.port
                logger.info("web remote listening on http://\(settings.listen)\(port == settings.port ? "" : " (port \(port))")")
                await onListening(port)
            })
        do {
            // Run as a service of the daemon's group, so it stops when that group asks.
            try await server.run()
        } catch let error as IOError {
            throw WebServerError(settings: settings, errno: error.errnoCode)
        }
    }
}

/// At most `limit` HTTP connections at once; more wait in the listen backlog until one closes.
/// Reaching the limit is logged once, and again only after the count has fallen to half.
struct WebConnectionLimit: AvailableConnectionsDelegate {
    let limit: Int
    let logger: Logger
    private var open = 0
    private var told = false

    init(limit: Int, logger: Logger) {
        self.limit = limit
        self.logger = logger
    }

    mutating func connectionOpened() {
        open += 1
        if open >= limit, !told {
            told = true
            logger.warning("the web remote has \(open) connections open, the most it serves at once; more wait until one closes")
        }
    }

    mutating func connectionClosed() {
        open -= 1
        if open <= limit / 2 { told = false }
    }

    func isAcceptingNewConnections() -> Bool { open < limit }
}

/// The web server could not listen: the port is taken or the address is not this machine's.
/// Fatal at start-up, so the daemon never runs with HTTP half started.
public struct WebServerError: Error, Sendable, CustomStringConvertible {
    public var settings: WebSettings
    public var errno: Int32
    public let exitCode: Int32 = 69

    public var description: String {
        let reason = switch errno {
        case 98: "the port is in use by another program (see `ss -ltnp`)"
        case 99: "this machine has no such address"
        case 13: "permission denied (ports below 1024 need root; use 8080)"
        default: "error \(errno)"
        }
        return "cannot listen for the web remote on \(settings.listen): \(reason)"
    }
}
