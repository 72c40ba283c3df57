import FoundationEssentials
import Hummingbird
import HummingbirdCore
import JukeboxFiles
import JukeboxDispatch
import JukeboxProtocol
import JukeboxCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The web front end as one more service of the daemon: Hummingbird's HTTP/1 server on the
/// configured address, over HTTPS unless the session says plain HTTP, shut down with the rest.
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
    let core: Jukebox
    let auth: WebAuth
    let logger: Logger
    let onListening: @Sendable (Int) async -> Void
    /// Where jukeboxd's own authority and server certificate are kept.
    let certificates: WebCertificateStore
    /// Where what it serves is told to the dispatchers, for `webCA`.
    let webCertificate: WebCertificateBoard
    /// The daemon's clocks: the certificate's checks read the wall clock, and wait on the
    /// measuring one.
    let time: TimeSource
    /// The machine's names and addresses, which the certificate must cover; tests set theirs.
    let names: @Sendable () -> ServerNames

    /// How often the server certificate is looked at: its end, and the machine's names and
    /// addresses (a new one from DHCP, say).
    public static let certificateCheck: Duration = .seconds(3600)

    /// The wall clock's time, as the certificates count it.
    func now() -> Date { Date(timeIntervalSince1970: time.wallClock()) }

    /// `password` nil is allowed only on a loopback address (the daemon checks at start-up).
    /// Browsers' sessions are kept in `sessionsFile`, so they outlive a restart.
    public init(
        settings: WebSettings, password: String?, sessionsFile: String?, certificates: WebCertificateStore,
        webCertificate: WebCertificateBoard = WebCertificateBoard(), core: Jukebox, logger: Logger,
        names: @escaping @Sendable () -> ServerNames = { ServerNames.ofThisMachine() }, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.settings = settings
        self.core = core
        self.auth = WebAuth(password: password, sessionsFile: sessionsFile, logger: logger, time: core.time)
        self.logger = logger
        self.certificates = certificates
        self.webCertificate = webCertificate
        time = core.time
        self.names = names
        self.onListening = onListening
    }

    /// Where a daemon whose state file is `statePath` keeps the web remote's sessions.
    public static func sessionsFile(besideState statePath: String) -> String {
        StateFile.sibling(of: statePath, ".web-sessions")
    }

    public func run() async throws {
        await auth.restore()
        let io = BlockingWorkQueue(label: "jukeboxd.web-certificates")
        var tls: (box: TLSContextBox, identity: WebIdentity)?
        if settings.https {
            let identity = try await io.run { [self] () throws(WebCertificateError) in try self.identity(previous: nil) }
            do {
                tls = (try TLSContextBox(identity), identity)
            } catch {
                throw WebCertificateError(message: "cannot serve HTTPS with the web remote's certificate: \(error)")
            }
            logIdentity(identity)
        } else {
            webCertificate.publish(.plainHTTP)
        }
        let authority = ServedAuthority(tls?.identity)
        let api = WebAPI(
            core: core, webCertificate: webCertificate, auth: auth, hosts: WebHosts(settings: settings), secure: settings.https,
            authority: { authority.pem }, logger: logger)
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .notice)
        // Hummingbird's HTTP/1 server without its `Application`, which adds a date cache that
        // wakes the daemon once a second for as long as it runs (about 360 context switches a
        // minute while idle); the Date header is made per response instead.
        let total = Self.maxConnections(openFileLimit: DescriptorLimit.openFiles)
        let perAddress = ConnectionsPerAddress(limit: ConnectionsPerAddress.limit(serving: total), total: total, logger: logger)
        let configuration = HTTP1Channel.Configuration(additionalChannelHandlers: [AddressLimitHandler(perAddress)], idleTimeout: Self.idleTimeout)
        let builder: HTTPServerBuilder
        if let tls {
            let plain = PlainHTTPAnswer(authority: api.authority, loopbackOnly: settings.isLoopback, covered: { tls.box.covered })
            builder = HTTPServerBuilder { responder in
                HTTPSChannel(base: HTTP1Channel(responder: responder, configuration: configuration), tls: tls.box, plain: plain)
            }
        } else {
            builder = .http1(configuration: configuration)
        }
        let server = try builder.buildServer(
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
                logger.info("web remote listening on \(settings.scheme)://\(settings.listen)\(port == settings.port ? "" : " (port \(port))")")
                // On every address, the line above names none a phone can open.
                if ["0.0.0.0", "::"].contains(settings.host) {
                    let urls = ServerNames.ofThisMachine().urls(scheme: settings.scheme, port: port)
                    if !urls.isEmpty { logger.info("on a phone, open the web remote at \(urls.joined(separator: " or "))") }
                }
                await onListening(port)
            })
        do {
            // Run as a service of the daemon's group, so it stops when that group asks.
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                if let tls {
                    tasks.addTask { await self.renew(tls.box, tls.identity, authority: authority, io: io) }
                }
                try await server.run()
                tasks.cancelAll()
            }
        } catch let error as IOError {
            throw WebServerError(settings: settings, errno: error.errnoCode)
        }
    }

    /// The certificate to serve: the user's own, or jukeboxd's, made or renewed as needed.
    /// Blocking: on `io`'s thread.
    func identity(previous: WebIdentity?) throws(WebCertificateError) -> WebIdentity {
        if let certificate = settings.certificateFile, let key = settings.keyFile {
            return try WebCertificateStore.own(certificate: certificate, key: key, now: now())
        }
        return try certificates.prepare(names: names(), now: now())
    }

    private func logIdentity(_ identity: WebIdentity) {
        if let authority = identity.authority {
            if let aside = identity.keptAside {
                logger.warning("the web remote's certificate authority could not be used (\(aside.reason)); it was kept as \(aside.paths.joined(separator: " and ")), and a new one was made: every phone must trust the new one (docs/web.md, or http://HOST:PORT/ca.crt)")
            } else if identity.madeAuthority {
                logger.notice("made the web remote's certificate authority \(authority.path) (SHA-256 \(authority.fingerprint)): trust it once on each phone (docs/web.md, or http://HOST:PORT/ca.crt)")
            }
            if identity.renewed {
                logger.info("made the web remote's certificate for \(identity.names), valid until \(WebCertificateStore.shortDate(identity.notAfter))")
            }
            let replaced = identity.keptAside.map { aside in
                "it replaced one that could not be used (\(aside.reason), kept as \(aside.paths.joined(separator: " and "))) on \(WebCertificateStore.shortDate(now())): every phone must trust this one"
            }
            var previous: String?
            if case .authority(let shown) = webCertificate.current, shown.path == authority.path { previous = shown.replaced }
            webCertificate.publish(.authority(WebCAResult(
                path: authority.path, fingerprint: authority.fingerprint, notAfter: authority.notAfter.timeIntervalSince1970,
                serverNames: identity.names, serverNotAfter: identity.notAfter.timeIntervalSince1970, replaced: replaced ?? previous)))
        } else {
            publishOwn(identity)
        }
    }

    /// A certificate of the user's own, told to the dispatchers (for `webCA`) with whether it
    /// has ended; one that has ended, or ends within 30 days, is warned of with its date, at
    /// start and at each hourly look. (jukeboxd's own are renewed before they end.)
    private func publishOwn(_ identity: WebIdentity) {
        let path = settings.certificateFile ?? ""
        let left = identity.notAfter.timeIntervalSince(now())
        webCertificate.publish(.ownCertificate(path: path, notAfter: identity.notAfter.timeIntervalSince1970, ended: left <= 0))
        let date = WebCertificateStore.shortDate(identity.notAfter)
        if left <= 0 {
            logger.warning("the web remote's certificate \(path) ended on \(date): browsers refuse it; put a renewed one there (jukeboxd reads it within the hour)")
        } else if left < WebCertificateStore.renewBefore {
            logger.warning("the web remote's certificate \(path) ends on \(date), in \(Plural.count(Int(left / 86400), "day")): put a renewed one there before then")
        }
    }

    /// Every `certificateCheck`: a certificate due for renewal, or one that no longer covers
    /// the machine's names and addresses, is made again; the user's own is read again when
    /// its files change. New connections get the new one.
    private func renew(_ box: TLSContextBox, _ first: WebIdentity, authority: ServedAuthority, io: BlockingWorkQueue) async {
        var current = first
        let clock = time.clock
        while (try? await clock.sleep(for: Self.certificateCheck)) != nil {
            let previous = current
            let next = await io.run { [self] () -> Result<WebIdentity, WebCertificateError> in
                Result { () throws(WebCertificateError) in try self.identity(previous: previous) }
            }
            switch next {
            case .failure(let error):
                logger.error("\(error); HTTPS goes on with the certificate it has, valid until \(WebCertificateStore.shortDate(current.notAfter))")
            case .success(let identity):
                guard identity.renewed || identity.madeAuthority || identity.chainPEM != current.chainPEM else {
                    if identity.authority == nil { publishOwn(identity) }
                    continue
                }
                do {
                    try box.replace(with: identity)
                    authority.serve(identity)
                    current = identity
                    logIdentity(identity)
                } catch {
                    logger.error("cannot serve the web remote's new certificate (\(error)); HTTPS goes on with the one it has")
                }
            }
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
public struct WebServerError: StartFailure, Sendable {
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

/// The certificate authority's certificate (PEM) that `/ca.crt` serves, in memory: set when
/// the certificate is made and each time it is made again, so a request never reads a file
/// on the event loop.
final class ServedAuthority: Sendable {
    private let current = Mutex<[UInt8]?>(nil)

    init(_ identity: WebIdentity?) { serve(identity) }

    /// The authority's certificate is the chain's last; a certificate of the user's own has none.
    func serve(_ identity: WebIdentity?) {
        let pem = identity.flatMap { identity in identity.authority == nil ? nil : identity.chainPEM.last.map { Array($0.utf8) } }
        current.withLock { $0 = pem }
    }

    var pem: [UInt8]? { current.withLock { $0 } }
}
