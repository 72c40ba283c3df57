import JukeboxProtocol
import Synchronization

/// What the web remote serves over HTTPS, as the web server last published it, for `webCA`.
/// The web server owns its certificates; this only shows the latest word of them to the
/// dispatchers, which the daemon hands the same board (the core knows nothing of TLS).
public final class WebCertificateBoard: Sendable {
    public enum Notice: Sendable, Equatable {
        /// No web remote, or it has not started yet.
        case off
        case plainHTTP
        /// A certificate of the user's own (`http.certificate`): no authority of jukeboxd's.
        /// `ended`: its end had passed when it was last looked at (at start, then hourly).
        case ownCertificate(path: String, notAfter: Double, ended: Bool)
        case authority(WebCAResult)
    }

    private let notice = Mutex(Notice.off)

    public init() {}

    public var current: Notice { notice.withLock { $0 } }

    public func publish(_ value: Notice) { notice.withLock { $0 = value } }
}
