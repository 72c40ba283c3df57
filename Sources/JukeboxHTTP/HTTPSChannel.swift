import HummingbirdCore
import JukeboxCore
import Logging
import NIOCore
import NIOSSL
import NIOTLS
import Synchronization

/// The TLS context new connections get, and the names its certificate covers. Replaced when
/// the certificate is renewed, so a renewal needs no restart; connections already open keep
/// the one they began with.
final class TLSContextBox: Sendable {
    private let served: Mutex<(context: NIOSSLContext, covered: CoveredNames)>

    init(_ identity: WebIdentity) throws {
        served = Mutex((try Self.context(for: identity), identity.covered))
    }

    var current: NIOSSLContext { served.withLock { $0.context } }
    var covered: CoveredNames { served.withLock { $0.covered } }

    func replace(with identity: WebIdentity) throws {
        let context = try Self.context(for: identity)
        served.withLock { $0 = (context, identity.covered) }
    }

    /// TLS 1.2 and 1.3, the server's chain and key.
    static func context(for identity: WebIdentity) throws -> NIOSSLContext {
        let chain = try identity.chainPEM.map { try NIOSSLCertificate(bytes: Array($0.utf8), format: .pem) }
        let key = try NIOSSLPrivateKey(bytes: Array(identity.keyPEM.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["http/1.1"]
        return try NIOSSLContext(configuration: configuration)
    }
}

/// HTTPS on the web remote's port, and on the same port an answer for a browser that comes
/// with plain HTTP (an old bookmark, or a phone that does not trust the authority yet): it
/// is sent to the same address over HTTPS, except for the authority's certificate itself,
/// which is served as it is, so that a phone can fetch it before it trusts anything.
struct HTTPSChannel<Base: ServerChildChannel & HTTPChannelHandler>: ServerChildChannel, HTTPChannelHandler {
    typealias Value = Base.Value

    let base: Base
    let tls: TLSContextBox
    let plain: PlainHTTPAnswer

    var responder: HTTPChannelHandler.Responder { base.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let sniffer = TLSOrPlainHandler(context: tls.current, plain: plain)
            try channel.pipeline.syncOperations.addHandler(sniffer, position: .first)
            // After the sniffer, so after the TLS handler it puts in its place: it sees the
            // handshake end.
            try channel.pipeline.syncOperations.addHandler(HandshakeDeadline(), position: .after(sniffer))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// The first byte of a connection tells TLS (a handshake record, 0x16) from plain HTTP (a
/// method's first letter). TLS: the TLS handler takes this one's place. Plain HTTP: the
/// request's head (at most `PlainHTTPAnswer.maxHeadSize`) is read, answered and the
/// connection closed; nothing of it reaches the HTTP server behind.
final class TLSOrPlainHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let context: NIOSSLContext
    private let plain: PlainHTTPAnswer
    private var head: ByteBuffer?
    private var answered = false

    init(context: NIOSSLContext, plain: PlainHTTPAnswer) {
        self.context = context
        self.plain = plain
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if head == nil {
            guard let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else { return }
            if first == 0x16 {
                do {
                    try context.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: self.context), position: .after(self))
                } catch {
                    context.close(promise: nil)
                    return
                }
                context.fireChannelRead(data)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
            head = context.channel.allocator.buffer(capacity: 512)
        }
        guard !answered else { return }
        head!.writeBuffer(&bytes)
        let view = head!.readableBytesView
        if let end = Self.endOfHead(view.prefix(PlainHTTPAnswer.maxHeadSize)) {
            respond(context, PlainHTTPAnswer.Request(Array(view.prefix(end))))
        } else if view.count >= PlainHTTPAnswer.maxHeadSize {
            respond(context, nil)
        }
    }

    private func respond(_ context: ChannelHandlerContext, _ request: PlainHTTPAnswer.Request?) {
        answered = true
        let bytes = plain.response(to: request)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(bytes: bytes))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// Where the head's empty line ends, or nil: `\r\n\r\n`, or the bare `\n\n` some
    /// clients send.
    static func endOfHead(_ bytes: ByteBufferView.SubSequence) -> Int? {
        let array = Array(bytes)
        guard array.count >= 2 else { return nil }
        for index in 1..<array.count where array[index] == 10 {
            if array[index - 1] == 10 || (index >= 2 && array[index - 1] == 13 && array[index - 2] == 10) { return index + 1 }
        }
        return nil
    }
}

/// A connection that has not finished its TLS handshake, or sent a plain request's head,
/// within `limit` is closed: a client that sends a few bytes of a handshake and stops would
/// otherwise hold its place for the whole idle timeout (30 s), and a few addresses doing so
/// could hold every place there is.
final class HandshakeDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// A handshake is one or two round trips; a phone on a weak signal needs well under a second.
    static let limit: TimeAmount = .seconds(5)

    private var timer: Scheduled<Void>?

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: Self.limit) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            timer?.cancel()
            timer = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// What a plain HTTP request to the HTTPS port gets: the authority's certificate at
/// `/ca.crt`, otherwise a redirect to the same path over HTTPS.
struct PlainHTTPAnswer: Sendable {
    /// A plain request's head may be this long; a longer one is refused.
    static let maxHeadSize = 8192

    /// The authority's certificate (PEM), or nil for a certificate of the user's own.
    let authority: @Sendable () -> [UInt8]?
    /// Only loopback names are answered (as `WebHosts`).
    let loopbackOnly: Bool
    /// The names the certificate served now covers: the only ones a request is sent on to.
    let covered: @Sendable () -> CoveredNames

    struct Request {
        var method = ""
        var path = ""
        var host: String?

        static func trimmed(_ text: Substring) -> String {
            String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        }

        init(_ head: [UInt8]) {
            let lines = head.split(separator: 10).map { String(decoding: $0.last == 13 ? $0.dropLast() : $0, as: UTF8.self) }
            let words = (lines.first ?? "").split(separator: " ", omittingEmptySubsequences: false)
            if words.count == 3 { (method, path) = (String(words[0]), String(words[1])) }
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == "host" else { continue }
                host = Self.trimmed(line[line.index(after: colon)...])
            }
        }
    }

    func response(to request: Request?) -> [UInt8] {
        guard let request, !request.method.isEmpty, request.path.hasPrefix("/") else {
            return Self.answer("400 Bad Request", "text/plain; charset=utf-8", Array("This is an HTTPS port: use https:// (a request's head is at most \(Self.maxHeadSize) bytes).\n".utf8))
        }
        guard let host = request.host, !host.isEmpty, host.count <= 255, host.utf8.allSatisfy(Self.isHostByte) else {
            return Self.answer("400 Bad Request", "text/plain; charset=utf-8", Array("The request has no usable Host header.\n".utf8))
        }
        if loopbackOnly, !WebSettings.isLoopback(WebHosts.name(host)) {
            return Self.answer("421 Misdirected Request", "text/plain; charset=utf-8", Array("This web remote answers on this machine only.\n".utf8))
        }
        let path = request.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
        if path == "/ca.crt", request.method == "GET" || request.method == "HEAD", let certificate = authority() {
            return Self.answer("200 OK", "application/x-x509-ca-cert", certificate, extra: ["Content-Disposition: attachment; filename=\"jukeboxd-ca.crt\""], headOnly: request.method == "HEAD")
        }
        let name = WebHosts.name(host)
        guard covered().covers(name) else {
            return Self.answer("400 Bad Request", "text/plain; charset=utf-8", Array("This is an HTTPS port, and its certificate is not for the name \(name): use https:// with a name it is for.\n".utf8))
        }
        // Only the path's own characters go into the Location header.
        let safePath = request.path.utf8.count <= 2048 && request.path.utf8.allSatisfy { $0 > 32 && $0 < 127 } ? request.path : "/"
        return Self.answer("301 Moved Permanently", "text/plain; charset=utf-8", Array("Use https://\(host)\(safePath)\n".utf8), extra: ["Location: https://\(host)\(safePath)"])
    }

    static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"): true
        default: false
        }
    }

    static func answer(_ status: String, _ type: String, _ body: [UInt8], extra: [String] = [], headOnly: Bool = false) -> [UInt8] {
        var lines = ["HTTP/1.1 \(status)", "Server: jukeboxd", "Date: \(HTTPDate.now())", "Content-Type: \(type)", "Content-Length: \(body.count)", "Connection: close", "X-Content-Type-Options: nosniff"]
        lines += extra
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) + (headOnly ? [] : body)
    }
}
