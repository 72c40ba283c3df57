import Hummingbird
import JukeboxCore

/// What keeps other sites out of the web remote, password or not:
/// - **Host.** On a loopback address (where no password is needed) only `localhost` and
///   loopback addresses are answered, so a site whose name an attacker points at 127.0.0.1
///   (DNS rebinding) gets no answer to read. Beyond loopback a password is required, and a
///   rebound page never has it, so any name is answered there.
/// - **Origin.** A request that may change something (anything but GET and HEAD) is refused
///   when the browser says it comes from another site: an `Origin` that is not this server,
///   or `Sec-Fetch-Site: cross-site`. Scripts (curl, Home Assistant) send neither.
struct WebHosts: Sendable {
    /// Only loopback names are answered.
    let loopbackOnly: Bool
    /// `https` or `http`: a page's origin is its scheme and host.
    let scheme: String

    init(settings: WebSettings) {
        loopbackOnly = settings.isLoopback
        scheme = settings.scheme
    }

    /// The answer to a request for a name this server does not answer to, or nil.
    func refusal(_ authority: String?) -> Response? {
        guard let authority, !authority.isEmpty else {
            return WebAPI.problem(.badRequest, "the request has no Host header")
        }
        guard loopbackOnly else { return nil }
        let name = Self.name(authority)
        guard WebSettings.isLoopback(name) else {
            return WebAPI.problem(.misdirectedRequest, "this web remote listens on this machine only, and answers as localhost or 127.0.0.1, not as \(name.prefix(100))")
        }
        return nil
    }

    /// The answer to a state-changing request that a browser says comes from another site, or nil.
    func crossSiteRefusal(_ request: Request) -> Response? {
        if request.headers[.init("Sec-Fetch-Site")!]?.lowercased() == "cross-site" {
            return WebAPI.problem(.forbidden, "this request came from another site's page")
        }
        guard let origin = request.headers[.origin] else { return nil }
        let host = (request.head.authority ?? "").lowercased()
        let from = origin.lowercased()
        guard from == "\(scheme)://\(host)" else {
            return WebAPI.problem(.forbidden, "this request came from another site (Origin \(origin.prefix(100)))")
        }
        return nil
    }

    /// The host part of a `Host` header, without its port or brackets, in lower case.
    static func name(_ authority: String) -> String {
        var text = Substring(authority.lowercased())
        if text.hasPrefix("[") {
            text = text.dropFirst().prefix { $0 != "]" }
        } else if let colon = text.lastIndex(of: ":") {
            text = text[..<colon]
        }
        if text.hasSuffix(".") { text = text.dropLast() }
        return String(text)
    }
}
