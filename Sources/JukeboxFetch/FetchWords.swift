import AsyncHTTPClient
import Glibc
import NIOCore
import NIOPosix
import NIOSSL

/// What went wrong with a fetch, in words: no NIO or TLS library text. Shared by the
/// calendar and media fetchers; `later` is what follows a failure that may pass ("it is
/// tried again later"), `tooLarge` what is said of a body over the limit.
enum FetchWords {
    static func words(for error: any Error, tooLarge: String, later: String) -> String {
        let again = later.isEmpty ? "" : "; \(later)"
        if error is NIOTooManyBytesError { return tooLarge }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .getConnectionFromPoolTimeout:
                return "the server could not be reached (refused, or no answer within 5 s)\(again)"
            case .deadlineExceeded, .readTimeout:
                return "the server did not answer within its time\(again)"
            case .tlsHandshakeTimeout:
                return "the server's HTTPS did not answer within its time"
            case .redirectLimitReached:
                return "the server sent it on more than \(HTTPCalendarFetcher.maxRedirects) times; give the address it ends at"
            case .redirectCycleDetected:
                return "the server sends it round in a circle; check the address"
            case .invalidURL, .emptyHost, .emptyScheme:
                return "it is not an address jukeboxd can fetch"
            case .remoteConnectionClosed:
                return "the server closed the connection before answering"
            default:
                return "it could not be fetched (\(error.shortDescription))"
            }
        }
        if error is NIOSSLError || error is BoringSSLError {
            return "its HTTPS certificate could not be verified (no authority this system trusts signed it, or it names another host)"
        }
        if let error = error as? NIOConnectionError {
            if error.dnsAAAAError != nil || error.dnsAError != nil, error.connectionErrors.isEmpty {
                return "its host name could not be found; check the address, and that this machine is online"
            }
            return "the server could not be reached (refused, or no route to it)\(again)"
        }
        if let error = error as? IOError, [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT].contains(error.errnoCode) {
            return "the server could not be reached (it refused, or there is no route to it)\(again)"
        }
        if error is IOError || error is ChannelError {
            return "the connection to the server failed\(again)"
        }
        return "it could not be fetched"
    }

    /// A status that brought no body, in words; `what` is what was asked for ("calendar").
    static func status(_ code: UInt, reason: String, what: String, privateHint: String) -> String {
        switch code {
        case 401, 403: "the server refused (\(code)): \(privateHint)"
        case 404, 410: "the server has no \(what) there (\(code)); check the address"
        case 300..<400: "the server sent it elsewhere (\(code)) without saying where"
        default: "the server answered \(code) \(reason.prefix(60))"
        }
    }
}
