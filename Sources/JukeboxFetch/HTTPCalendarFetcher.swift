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
            default:
                throw CalendarFetchError(FetchWords.status(
                    response.status.code, reason: response.status.reasonPhrase, what: "calendar",
                    privateHint: "the address is private; use the calendar's public or secret iCal address"))
            }
        } catch let error as CalendarFetchError {
            throw error
        } catch {
            throw CalendarFetchError(Self.words(for: error))
        }
    }

    /// What went wrong, in words: no NIO or TLS library text.
    static func words(for error: any Error) -> String {
        FetchWords.words(
            for: error, tooLarge: "it is larger than \(ICalendar.maxBytes >> 20) MB; a calendar of a few years is far smaller",
            later: "it is tried again later")
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
