import FoundationEssentials
import Hummingbird
import HummingbirdCore
import JukeboxDispatch
import JukeboxCore
import JukeboxProtocol
import Logging
import NIOCore
import ServiceLifecycle

/// The HTTP API: the same protocol as the control socket, over HTTP. It only translates:
/// `POST /rpc` hands the body to the socket's own request handler, `GET /events` follows the
/// core's event stream, and `POST /clips` feeds an upload to the core. Every rule is the
/// core's or the socket handler's; this adds authentication, the Origin check and limits.
struct WebAPI: Sendable {
    /// A request body other than an upload's may be at most this long.
    static let maxBodySize = 64 * 1024
    /// A comment is sent on an event stream this often, so proxies and browsers keep it open.
    static let heartbeat: Duration = .seconds(15)
    /// Events a slow reader of `/events` may have waiting; past that it loses the oldest.
    static let eventBuffer = 1000

    let core: Jukebox
    /// What this server serves, for `webCA` through `/rpc`.
    let webCertificate: WebCertificateBoard
    let auth: WebAuth
    let hosts: WebHosts
    /// Served over HTTPS: cookies are marked `Secure`.
    let secure: Bool
    /// The certificate authority's certificate (PEM) for `/ca.crt`; nil without one.
    let authority: @Sendable () -> [UInt8]?
    let logger: Logger

    /// The browser's session cookie's attributes.
    var cookieAttributes: String { "HttpOnly; SameSite=Strict; Path=/" + (secure ? "; Secure" : "") }

    func respond(to request: Request, context: WebContext) async -> Response {
        var response = await route(request, context: context)
        response.headers[.contentSecurityPolicy] = "default-src 'self'"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.init("Referrer-Policy")!] = "same-origin"
        return response
    }

    private func route(_ request: Request, context: WebContext) async -> Response {
        // DNS rebinding: a page whose name now points at this machine is another site.
        if let refusal = hosts.refusal(request.head.authority) { return refusal }
        // Another site's page may make a browser send requests here; a browser says where
        // from (Origin, Sec-Fetch-Site), and nothing that changes anything is taken from
        // another site, with or without a password.
        if request.method != .get, request.method != .head, let refusal = hosts.crossSiteRefusal(request) { return refusal }
        switch (request.method, request.uri.path) {
        case (.post, "/login"): return await login(request, context: context)
        case (.post, "/logout"):
            await auth.logout(cookie: request.headers[.cookie])
            return Response(status: .noContent, headers: [.setCookie: "\(WebAuth.cookieName)=; \(cookieAttributes); Max-Age=0"])
        case (.post, "/rpc"), (.get, "/events"), (.post, "/clips"), (.get, "/metrics"):
            switch await allowed(request, context: context) {
            case .failure(let refusal): return refusal.response
            case .success: break
            }
            switch request.uri.path {
            case "/rpc": return await rpc(request)
            case "/events": return events()
            case "/metrics": return await metrics()
            default: return await upload(request, query: request.uri.query ?? "")
            }
        case (.get, "/healthz"):
            // Public, for a monitoring agent: "ok" or the one reason, nothing more.
            let health = await core.health()
            return Response(
                status: health.isHealthy ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: health.words + "\n")))
        case (.get, "/ca.crt"):
            // Public, as any certificate is: a phone fetches it before it trusts anything.
            guard let certificate = authority() else { return Self.problem(.notFound, "this web remote has no certificate authority of its own") }
            return Response(
                status: .ok,
                headers: [.contentType: "application/x-x509-ca-cert", .contentDisposition: "attachment; filename=\"jukeboxd-ca.crt\"", .cacheControl: "no-cache"],
                body: .init(byteBuffer: ByteBuffer(bytes: certificate)))
        case (.get, let path) where WebFiles.files[path] != nil:
            // The page itself is public: what it shows comes through /rpc, which is not.
            let file = WebFiles.files[path]!
            return Response(status: .ok, headers: [.contentType: file.type, .cacheControl: "no-cache"], body: .init(byteBuffer: ByteBuffer(string: file.text)))
        default:
            return Self.problem(.notFound, "no such page: \(request.uri.path)")
        }
    }

    /// The core's counts and the process's own, in Prometheus' text format.
    private func metrics() async -> Response {
        let counts = await core.metrics()
        let process = await BlockingWorkQueue(label: "jukeboxd.metrics").run { MetricsText.readProcess() }
        return Response(
            status: .ok, headers: [.contentType: MetricsText.contentType, .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: MetricsText.text(counts, process: process))))
    }

    /// Credentials, and for a browser's cookie on a state-changing request, an Origin.
    private func allowed(_ request: Request, context: WebContext) async -> Result<Void, Refusal> {
        let credential: WebAuth.Credential
        switch await auth.check(authorization: request.headers[.authorization], cookie: request.headers[.cookie], from: context.clientAddress) {
        case .allowed(let allowed): credential = allowed
        case .refused:
            var response = Self.problem(.unauthorized, "log in first (POST /login), or send Authorization: Bearer PASSWORD")
            response.headers[.wwwAuthenticate] = "Bearer"
            return .failure(Refusal(response: response))
        case .throttled(let seconds):
            return .failure(Refusal(response: Self.throttled(seconds)))
        }
        if credential == .cookie, request.method != .get, request.headers[.origin] == nil {
            // Only a browser has the cookie, and a browser says where a request comes from.
            return .failure(Refusal(response: Self.problem(.forbidden, "this request does not say which site it came from (no Origin header)")))
        }
        return .success(())
    }

    static func throttled(_ seconds: Int) -> Response {
        var response = problem(.tooManyRequests, "too many wrong passwords from this address; try again in \(seconds) s")
        response.headers[.retryAfter] = "\(seconds)"
        return response
    }

    struct Refusal: Error {
        var response: Response
    }

    // MARK: - Login

    private func login(_ request: Request, context: WebContext) async -> Response {
        if let refusal = Self.refuseLongBody(request) { return refusal }
        var request = request
        guard let body = try? await request.collectBody(upTo: Self.maxBodySize) else {
            return Self.problem(.contentTooLarge, "the body is over \(Self.maxBodySize / 1024) KiB")
        }
        let text = String(buffer: body)
        let password: String?
        if request.headers[.contentType]?.hasPrefix("application/json") == true {
            password = (try? JSONParser.parse(Array(text.utf8))).flatMap { value -> String? in
                if case .object(let fields) = value, case .string(let password)? = fields["password"] { password } else { nil }
            }
        } else {
            password = try? Self.formField("password", in: text)?.get()
        }
        guard let password else { return Self.problem(.badRequest, "send the password as password=… (a form) or {\"password\": …}") }
        switch await auth.login(password: password, from: context.clientAddress) {
        case .accepted(let token):
            let age = Int(WebAuth.sessionLifetime.components.seconds)
            return Response(status: .noContent, headers: [.setCookie: "\(WebAuth.cookieName)=\(token); \(cookieAttributes); Max-Age=\(age)"])
        case .refused:
            return Self.problem(.unauthorized, "wrong password")
        case .throttled(let seconds):
            return Self.throttled(seconds)
        }
    }

    /// A value whose percent escapes are broken, or whose bytes are not UTF-8.
    struct BrokenField: Error {}

    /// The first field `name` of `application/x-www-form-urlencoded` text (a form's body, or
    /// a query, as browsers write both: `+` for a space): nil when there is none.
    static func formField(_ name: String, in text: String) -> Result<String, BrokenField>? {
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return percentDecoded(parts[1]).map { .success($0) } ?? .failure(BrokenField())
        }
        return nil
    }

    /// `a+b%21` → `a b!`; nil when an escape is broken or the bytes are not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next(), let low = iterator.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// A body announced as longer than `maxBodySize` is refused at once, unread.
    static func refuseLongBody(_ request: Request) -> Response? {
        guard let length = request.headers[.contentLength].flatMap(Int.init), length > maxBodySize else { return nil }
        return problem(.contentTooLarge, "a request is at most \(maxBodySize / 1024) KiB")
    }

    // MARK: - JSON-RPC

    /// One JSON-RPC request, answered exactly as the socket answers it, after the same
    /// durability wait.
    private func rpc(_ request: Request) async -> Response {
        if let refusal = Self.refuseLongBody(request) { return refusal }
        var request = request
        guard let body = try? await request.collectBody(upTo: Self.maxBodySize) else {
            return Self.problem(.contentTooLarge, "a request is at most \(Self.maxBodySize / 1024) KiB")
        }
        let reply = await RPCDispatcher(core: core, client: "web", frontEnd: .web, webCertificate: webCertificate).handle(Array(buffer: body))
        guard let line = reply.line else { return Response(status: .noContent) }
        if reply.rawBytes != nil {
            // The bytes of an upload cannot follow an HTTP request: POST /clips takes them.
            return Self.problem(.badRequest, "over HTTP, send a file with POST /clips?name=NAME")
        }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: line)))
    }

    // MARK: - Events

    /// Server-Sent Events: every notification `subscribe` sends on the socket, `event:` its
    /// method and `data:` its params, and a comment every 15 s.
    private func events() -> Response {
        let core = core
        let body = ResponseBody { writer in
            let (outgoing, send) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(Self.eventBuffer))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    for await event in core.events.subscribe() {
                        let (method, params) = event.notification
                        let data = (try? JSONEncoder.sorted.encode(params)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
                        send.yield(ByteBuffer(string: "event: \(method)\ndata: \(data)\n\n"))
                    }
                }
                tasks.addTask {
                    while (try? await Task.sleep(for: Self.heartbeat)) != nil { send.yield(ByteBuffer(string: ": still here\n\n")) }
                }
                send.yield(ByteBuffer(string: ": jukeboxd events\n\n"))
                // A stream never ends by itself: on shutdown it ends, so the server need not
                // wait for clients that follow events.
                try await withGracefulShutdownHandler {
                    for await chunk in outgoing { try await writer.write(chunk) }
                } onGracefulShutdown: {
                    send.finish()
                }
                tasks.cancelAll()
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }

    // MARK: - Uploads

    /// `POST /clips?name=NAME[&id=…&title=…]` with the file as the body, or a
    /// `multipart/form-data` form with a `file` part: the same upload path as the socket's
    /// (same checks, same conversion, same limits).
    private func upload(_ request: Request, query: String) async -> Response {
        var fields: [String: String] = [:]
        for key in Self.formFields + ["name"] {
            switch Self.formField(key, in: query) {
            case nil: continue
            case .success(let value) where value.utf8.count > Self.maxFormFieldSize:
                return Self.problem(.badRequest, "the query's \(key) is over \(Self.maxFormFieldSize) bytes")
            case .success(let value): fields[key] = value
            case .failure:
                return Self.problem(.badRequest, "the query's \(key) is not percent-encoded UTF-8 text: encode it as encodeURIComponent does (a space as %20 or +)")
            }
        }
        let name = fields.removeValue(forKey: "name")
        let received: Result<ClipUpload, Refusal>
        if let type = request.headers[.contentType], type.lowercased().hasPrefix("multipart/") {
            received = await receiveForm(request, contentType: type, fields: &fields)
        } else {
            received = await receiveBody(request, name: name)
        }
        let upload: ClipUpload
        switch received {
        case .failure(let refusal): return refusal.response
        case .success(let received): upload = received
        }
        let ifRevision = fields.removeValue(forKey: "ifRevision")
        do throws(JukeboxError) {
            let added = try await core.addClip(upload: upload, fields: fields.mapValues { .string($0) }, ifRevision: ifRevision)
            try await core.waitUntilDurable(added)
            let result = EditResult(added.value)
            return Response(status: .created, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: (try? JSONEncoder.sorted.encode(result)) ?? Data())))
        } catch {
            return Self.refusal(error)
        }
    }

    /// The fields an upload may carry besides the file, in the query or as form fields.
    static let formFields = ["id", "title", "ifRevision"]
    /// A form field other than the file may be at most this long.
    static let maxFormFieldSize = 1024

    /// The body is the file.
    private func receiveBody(_ request: Request, name: String?) async -> Result<ClipUpload, Refusal> {
        guard let name, !name.isEmpty else {
            return .failure(Refusal(response: Self.problem(.badRequest, "name the file: POST /clips?name=NAME, or send a multipart/form-data form with a file")))
        }
        guard let size = request.headers[.contentLength].flatMap(Int.init) else {
            return .failure(Refusal(response: Self.problem(.lengthRequired, "send the file with a Content-Length")))
        }
        let upload: ClipUpload
        do throws(JukeboxError) {
            upload = try await core.beginUpload(name: name, size: size)
        } catch {
            return .failure(Refusal(response: Self.refusal(error)))
        }
        do {
            for try await piece in request.body {
                do throws(JukeboxError) {
                    try await upload.write(Array(buffer: piece))
                } catch {
                    // The daemon's side failed (a full disk, say): not the client's fault.
                    await upload.discard()
                    return .failure(Refusal(response: Self.refusal(error)))
                }
            }
        } catch {
            await upload.discard()
            return .failure(Refusal(response: Self.problem(.badRequest, "the upload of \(name) did not arrive whole")))
        }
        return .success(upload)
    }

    /// A form (what a browser's file input sends): one `file` part, and the `formFields`.
    private func receiveForm(_ request: Request, contentType: String, fields: inout [String: String]) async -> Result<ClipUpload, Refusal> {
        func refused(_ message: String) -> Result<ClipUpload, Refusal> { .failure(Refusal(response: Self.problem(.badRequest, message))) }
        var reader: MultipartReader
        do throws(MultipartReader.Malformed) {
            reader = try MultipartReader(contentType: contentType)
        } catch {
            return refused("the form cannot be read: \(error.reason)")
        }
        let limit = await core.maxUploadSize
        let length = request.headers[.contentLength].flatMap(Int.init)
        var upload: ClipUpload?
        var field: (name: String, value: [UInt8])?
        var parts = 0
        do {
            func endField() {
                if let (name, value) = field { fields[name] = String(decoding: value, as: UTF8.self) }
                field = nil
            }
            for try await piece in request.body {
                for event in try reader.read(piece.readableBytesView) {
                    switch event {
                    case .part(let name, let filename):
                        endField()
                        parts += 1
                        if parts > Self.formFields.count + 1 { throw FormRefusal.refused("the form has more than \(Self.formFields.count + 1) parts") }
                        if name == "file" {
                            guard upload == nil else { throw FormRefusal.refused("send one file per request") }
                            let filename = filename ?? ""
                            guard !filename.isEmpty else { throw FormRefusal.refused("the form's file part has no file name") }
                            // The form around the file is small: a far larger body cannot fit the limit.
                            if let length, length > limit + Self.maxBodySize {
                                throw FormRefusal.core(.uploadTooLarge(name: ClipUpload.safeName(filename), size: length, limit: limit))
                            }
                            do throws(JukeboxError) { upload = try await core.beginUpload(name: filename) } catch { throw FormRefusal.core(error) }
                        } else if Self.formFields.contains(name) {
                            guard fields[name] == nil else { throw FormRefusal.refused("the form has two \(name) fields") }
                            field = (name, [])
                        } else {
                            throw FormRefusal.refused("the form field \(name) is not known: send file, \(Self.formFields.joined(separator: ", "))")
                        }
                    case .bytes(let bytes):
                        if let upload, field == nil {
                            do throws(JukeboxError) { try await upload.write(bytes) } catch { throw FormRefusal.core(error) }
                        } else if field != nil {
                            field!.value += bytes
                            if field!.value.count > Self.maxFormFieldSize {
                                throw FormRefusal.refused("the form field \(field!.name) is over \(Self.maxFormFieldSize) bytes")
                            }
                        }
                    case .end:
                        endField()
                    }
                }
            }
            guard reader.isFinished else { throw FormRefusal.refused("the form did not arrive whole") }
            guard let upload else { throw FormRefusal.refused("the form has no file: send it as the part named file") }
            return .success(upload)
        } catch {
            await upload?.discard()
            switch error {
            case let error as MultipartReader.Malformed: return refused("the form cannot be read: \(error.reason)")
            case FormRefusal.core(let error): return .failure(Refusal(response: Self.refusal(error)))
            case FormRefusal.refused(let message): return refused(message)
            default: return refused("the form did not arrive whole")
            }
        }
    }

    private enum FormRefusal: Error {
        case refused(String)
        case core(JukeboxError)
    }

    // MARK: - Errors

    /// A refusal from the core, with the status that fits and the socket's error object.
    static func refusal(_ error: JukeboxError) -> Response {
        let status: HTTPResponse.Status = switch error {
        case .uploadTooLarge: .contentTooLarge
        case .unplayable, .editInvalid: .unprocessableContent
        case .sessionChangedOnDisk, .revisionMismatch: .conflict
        case .stateNotSaved, .sessionNotSaved, .uploadRefused: .internalServerError
        case .uploadsBusy: .serviceUnavailable
        default: .badRequest
        }
        var response = errorResponse(status, RPCError(error))
        if case .uploadsBusy(_, let seconds) = error { response.headers[.retryAfter] = "\(seconds)" }
        return response
    }

    static func problem(_ status: HTTPResponse.Status, _ message: String) -> Response {
        errorResponse(status, RPCError(code: -32600, message: message, data: .init(reason: "http-\(status.code)")))
    }

    private static func errorResponse(_ status: HTTPResponse.Status, _ error: RPCError) -> Response {
        struct Body: Encodable { var error: RPCError }
        let bytes = (try? JSONEncoder.sorted.encode(Body(error: error))) ?? Data()
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
