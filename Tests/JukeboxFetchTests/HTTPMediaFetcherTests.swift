import JukeboxCore
import JukeboxFetch
import JukeboxTestSupport
import Synchronization
import Testing

/// The media fetcher against the same Python server as the calendar fetcher's tests: the
/// size, redirect and time limits at, under and over, refusals in words, and a receiver that
/// stops the fetch.
@Suite("Fetching media", .serialized, .timeLimit(.minutes(1)))
struct HTTPMediaFetcherTests {
    let server = HTTPCalendarFetcherTests()

    enum Outcome: Equatable {
        case success(Int)
        case failure(String)
    }

    /// What a fetch brought in bytes, or its failure's words.
    func fetch(_ address: String, with fetcher: HTTPMediaFetcher = HTTPMediaFetcher()) async -> Outcome {
        let count = Mutex(0)
        do {
            try await fetcher.fetch(address) { bytes in count.withLock { $0 += bytes.count } }
            return .success(count.withLock { $0 })
        } catch {
            return .failure("\(error)")
        }
    }

    @Test func upTo20MBIsFetchedAndOneByteMoreIsRefused() async throws {
        try await server.withServer { base in
            let limit = MediaLimits.maxBytes
            #expect(await fetch(base + "/size/\(limit - 1)") == .success(limit - 1))
            #expect(await fetch(base + "/size/\(limit)") == .success(limit))
            #expect(await fetch(base + "/size/\(limit + 1)") == .failure("it is larger than 20 MB, the most jukeboxd fetches"))
        }
    }

    @Test func fiveRedirectsAreFollowedAndASixthIsNot() async throws {
        try await server.withServer { base in
            #expect(await fetch(base + "/redirect/4") == .success(HTTPCalendarFetcherTests.calendar.utf8.count))
            #expect(await fetch(base + "/redirect/5") == .success(HTTPCalendarFetcherTests.calendar.utf8.count))
            #expect(await fetch(base + "/redirect/6") == .failure("the server sent it on more than 5 times; give the address it ends at"))
        }
    }

    @Test func theWholeFetchIsBoundedInTimeEvenWhenBytesKeepComing() async throws {
        try await server.withServer { base in
            let quick = HTTPMediaFetcher(timeout: .seconds(1))
            #expect(await fetch(base + "/hang", with: quick) == .failure("it did not all come within 1s"))
            #expect(await fetch(base + "/trickle", with: quick) == .failure("it did not all come within 1s"))
            // Under the limit, the trickle comes whole.
            #expect(await fetch(base + "/trickle", with: HTTPMediaFetcher(timeout: .seconds(20))) == .success(20))
        }
    }

    @Test func refusalsAreSaidInWords() async throws {
        try await server.withServer { base in
            #expect(await fetch(base + "/missing") == .failure("the server has no media there (404); check the address"))
            #expect(await fetch(base + "/private") == .failure("the server refused (403): the address needs a login or a token jukeboxd was not given"))
            let closed = await fetch("http://127.0.0.1:\(Loopback.serverPort())/clip.flac")
            guard case .failure(let words) = closed else { return #expect(Bool(false), "fetched from a closed port") }
            #expect(words.hasPrefix("the server could not be reached ("), "\(words)")
        }
    }

    @Test func aReceiverThatRefusesStopsTheFetchWithItsOwnError() async throws {
        struct Full: Error {}
        try await server.withServer { base in
            await #expect(throws: Full.self) {
                try await HTTPMediaFetcher().fetch(base + "/size/100000") { _ in throw Full() }
            }
        }
    }
}
