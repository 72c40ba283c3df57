import AsyncHTTPClient
import JukeboxCore
import NIOCore
import NIOHTTP1

/// Fetches media by address over HTTP or HTTPS with AsyncHTTPClient, for Home Assistant's
/// `play_media`: HTTPS verified against the system's authorities; at most
/// `MediaLimits.maxBytes`, `MediaLimits.timeout` for the whole fetch, and
/// `MediaLimits.maxRedirects` redirects (to http and https only). The body goes to the
/// receiver as it comes. What goes wrong is said in words.
public struct HTTPMediaFetcher: MediaFetcher {
    let timeout: Duration
    let maxBytes: Int

    public init(timeout: Duration = MediaLimits.timeout, maxBytes: Int = MediaLimits.maxBytes) {
        self.timeout = timeout
        self.maxBytes = maxBytes
    }

    public func fetch(_ address: String, into receive: @escaping @Sendable ([UInt8]) async throws -> Void) async throws {
        let (timeout, maxBytes) = (timeout, maxBytes)
        // The whole fetch within `timeout`, however the server trickles.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await Self.stream(address, maxBytes: maxBytes, timeout: timeout, into: receive) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw MediaFetchError("it did not all come within \(DurationText.format(timeout))")
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    private static func stream(_ address: String, maxBytes: Int, timeout: Duration, into receive: @Sendable ([UInt8]) async throws -> Void) async throws {
        var request = HTTPClientRequest(url: address)
        request.headers.add(name: "User-Agent", value: "jukeboxd")
        request.headers.add(name: "Accept", value: "audio/*, */*;q=0.5")
        let tooLarge = MediaFetchError("it is larger than \(maxBytes >> 20) MB, the most jukeboxd fetches")
        do {
            // The whole fetch's own deadline comes first; this one only ends the request's task.
            let response = try await sharedMediaClient.execute(request, timeout: .seconds(Int64(timeout.components.seconds) + 5))
            guard (200..<300).contains(response.status.code) else {
                throw MediaFetchError(FetchWords.status(
                    response.status.code, reason: response.status.reasonPhrase, what: "media",
                    privateHint: "the address needs a login or a token jukeboxd was not given"))
            }
            if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > maxBytes { throw tooLarge }
            var received = 0
            for try await chunk in response.body {
                received += chunk.readableBytes
                guard received <= maxBytes else { throw tooLarge }
                do {
                    try await receive(Array(chunk.readableBytesView))
                } catch {
                    throw Refused(error: error)
                }
            }
        } catch let refused as Refused {
            throw refused.error
        } catch let error as MediaFetchError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw MediaFetchError(FetchWords.words(for: error, tooLarge: tooLarge.description, later: ""))
        }
    }
}

/// The receiver's own error, which goes out as it is.
private struct Refused: Error {
    let error: any Error
}

/// The one client, made at the first fetch and never shut down (the process ends it).
private let sharedMediaClient: HTTPClient = {
    var configuration = HTTPClient.Configuration(
        certificateVerification: .fullVerification,
        redirectConfiguration: .follow(max: MediaLimits.maxRedirects, allowCycles: false),
        timeout: HTTPClient.Configuration.Timeout(connect: .seconds(5), read: .seconds(10)))
    configuration.httpVersion = .http1Only
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}()
