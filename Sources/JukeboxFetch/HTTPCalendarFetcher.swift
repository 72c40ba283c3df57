import AsyncHTTPClient
import Glibc
import JukeboxCalendar
import JukeboxCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Fetches a calendar's address over HTTP or HTTPS with AsyncHTTPClient: HTTPS verified
/// against the system's authorities; at most `ICalendar.maxBytes`, `timeout` and 5
/// redirects; `If-None-Match` and `If-Modified-Since` from the last fetch, so an unchanged
/// calendar costs its server a 304. What goes wrong is said in words.
public struct HTTPCalendarFetcher: CalendarFetcher {
    public static let maxRedirects = 5
    public static let defaultTimeout: Duration = .seconds(10)

    let timeout: Duration

    public init(timeout: Duration = HTTPCalendarFetcher.defaultTimeout) {
        self.timeout = timeout
    }

    public func fetch(_ address: String, since: CalendarFetch.Validators?) async throws(CalendarFetchError) -> CalendarFetch {
        var request = HTTPClientRequest(url: address)
        request.headers.add(name: "User-Agent", value: "jukeboxd")
        request.headers.add(name: "Accept", value: "text/calendar, */*;q=0.5")
        if let etag = since?.etag { request.headers.add(name: "If-None-Match", value: etag) }
        if let lastModified = since?.lastModified { request.headers.add(name: "If-Modified-Since", value: lastModified) }
        do {
            let response = try await sharedCalendarClient.execute(request, timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000))
            switch response.status.code {
            case 304:
                return .notModified
            case 200..<300:
                let body = try await response.body.collect(upTo: ICalendar.maxBytes)
                let validators = CalendarFetch.Validators(
                    etag: response.headers.first(name: "ETag"), lastModified: response.headers.first(name: "Last-Modified"))
                return .fetched(text: String(buffer: body), validators: validators)
            case 401, 403:
                throw CalendarFetchError("the server refused (\(response.status.code)): the address is private; use the calendar's public or secret iCal address")
            case 404, 410:
                throw CalendarFetchError("the server has no calendar there (\(response.status.code)); check the address")
            case 300..<400:
                throw CalendarFetchError("the server sent it elsewhere (\(response.status.code)) without saying where")
            default:
                throw CalendarFetchError("the server answered \(response.status.code) \(response.status.reasonPhrase.prefix(60))")
            }
        } catch let error as CalendarFetchError {
            throw error
        } catch {
            throw CalendarFetchError(Self.words(for: error))
        }
    }

    /// What went wrong, in words: no NIO or TLS library text.
    static func words(for error: any Error) -> String {
        if error is NIOTooManyBytesError {
            return "it is larger than \(ICalendar.maxBytes >> 20) MB; a calendar of a few years is far smaller"
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .getConnectionFromPoolTimeout:
                return "the server could not be reached (refused, or no answer within 5 s); it is tried again later"
            case .deadlineExceeded, .readTimeout:
                return "the server did not answer within its time; it is tried again later"
            case .tlsHandshakeTimeout:
                return "the server's HTTPS did not answer within its time"
            case .redirectLimitReached:
                return "the server sent it on more than \(maxRedirects) times; give the address it ends at"
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
            return "the server could not be reached (refused, or no route to it); it is tried again later"
        }
        if let error = error as? IOError, [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT].contains(error.errnoCode) {
            return "the server could not be reached (it refused, or there is no route to it); it is tried again later"
        }
        if error is IOError || error is ChannelError {
            return "the connection to the server failed; it is tried again later"
        }
        return "it could not be fetched"
    }
}

/// The one client, made at the first fetch and never shut down (the process ends it).
private let sharedCalendarClient: HTTPClient = {
    var configuration = HTTPClient.Configuration(
        certificateVerification: .fullVerification,
        redirectConfiguration: .follow(max: HTTPCalendarFetcher.maxRedirects, allowCycles: false),
        timeout: HTTPClient.Configuration.Timeout(connect: .seconds(5), read: .seconds(10)),
        decompression: .enabled(limit: .size(ICalendar.maxBytes)))
    configuration.httpVersion = .http1Only
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}()
