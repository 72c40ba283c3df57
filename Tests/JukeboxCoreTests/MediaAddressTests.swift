import FoundationEssentials
import Glibc
import JukeboxSndFile
import JukeboxTestSupport
import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// Media by address in the core: what a fetch brings is checked as an upload is, kept in the
/// clips folder's `.media`, and queued; the limits, and that a refusal keeps nothing. The
/// network is stood in for by `ServedMedia` (HTTPMediaFetcherTests fetch over real HTTP).
@Suite("Media by address", .timeLimit(.minutes(1)))
struct MediaAddressTests {
    /// Addresses and what they hold: bytes, handed over in pieces, or a failure's words.
    struct ServedMedia: MediaFetcher {
        let files: [String: Result<[UInt8], MediaFetchError>]
        func fetch(_ address: String, into receive: @escaping @Sendable ([UInt8]) async throws -> Void) async throws {
            switch files[address] ?? .failure(MediaFetchError("the server has no media there (404); check the address")) {
            case .failure(let error): throw error
            case .success(let bytes):
                for start in stride(from: 0, to: bytes.count, by: 1000) { try await receive(Array(bytes[start..<min(start + 1000, bytes.count)])) }
            }
        }
    }

    let folder: TemporaryDirectory
    let core: Jukebox
    static let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 800, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)

    init() async throws {
        folder = try TemporaryDirectory()
        try folder.write("water.wav", Self.tone)
        let path = try folder.write("s.json", text: #"{ "clips": [ { "file": "water.wav" } ] }"#)
        let session = try SessionLoader.load(path: path)
        let served = ServedMedia(files: [
            "http://ha.local/tts/hello.wav": .success(Self.tone),
            "http://ha.local/chime.wav": .success(Self.tone),
            "http://ha.local/text.txt": .success(Array("not audio at all, but long enough to be looked at".utf8)),
            "http://ha.local/slow.wav": .failure(MediaFetchError("it did not all come within 30s")),
        ])
        core = Jukebox.test(
            await ClipCatalog.probing(session, with: SndFileDecoder()), decoder: SndFileDecoder(), makeSink: { _, _ in NullSink() },
            mediaFetcher: served)
    }

    var media: String { folder.file(".media") }
    func kept() throws -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: media).sorted()) ?? [] }

    @Test func eightWaitAndANinthIsRefusedKeepingNothing() async throws {
        for _ in 1...8 {
            _ = try await core.playAddress("http://ha.local/tts/hello.wav", client: "home-assistant")
        }
        #expect(try kept().count == 8)
        await #expect(throws: JukeboxError.uploadRefused("8 fetched media are waiting to play already; try again once one has played")) {
            _ = try await core.playAddress("http://ha.local/tts/hello.wav", client: "home-assistant")
        }
        #expect(try kept().count == 8)
        let waiting = await core.snapshot().queue.waiting
        #expect(waiting.count == 8 && waiting.allSatisfy { $0.clip.id == Jukebox.mediaID })
        #expect(waiting.first?.clip.title == "media: hello.wav")
        #expect(waiting.first?.clip.source.path == folder.file(".media/hello.wav"))
    }

    @Test func aFetchThatFailsOrBringsNoAudioKeepsNothing() async throws {
        await #expect(throws: JukeboxError.uploadRefused("the media at http://ha.local/slow.wav could not be fetched: it did not all come within 30s; nothing was kept")) {
            _ = try await core.playAddress("http://ha.local/slow.wav", client: "home-assistant")
        }
        do {
            _ = try await core.playAddress("http://ha.local/text.txt", client: "home-assistant")
            Issue.record("text was queued")
        } catch {
            guard case .unplayable(let name, _) = error else { return #expect(Bool(false), "\(error)") }
            #expect(name == "text.txt")
        }
        #expect(try kept().isEmpty, "no file of either is left")
        #expect(await core.snapshot().queue.waiting.isEmpty)
    }

    @Test func theChimeIsTheCueOfOneUrgentEntry() async throws {
        let queued = try await core.playAddress(
            "http://ha.local/tts/hello.wav", before: "http://ha.local/chime.wav", title: "Home Assistant's announcement", client: "home-assistant", now: true)
        #expect(queued.value.entry.urgent)
        #expect(queued.value.entry.cue?.source.path == folder.file(".media/chime.wav"))
        #expect(queued.value.entry.clip.title == "Home Assistant's announcement")
        #expect(try kept() == ["chime.wav", "hello.wav"])
        // A chime that cannot be fetched refuses the whole announcement, keeping nothing.
        await #expect(throws: JukeboxError.self) {
            _ = try await core.playAddress("http://ha.local/tts/hello.wav", before: "http://ha.local/missing.wav", client: "home-assistant", now: true)
        }
        #expect(try kept() == ["chime.wav", "hello.wav"])
    }

    @Test func whatNoEntryNeedsIsRemovedAtTheNextFetch() async throws {
        let first = try await core.playAddress("http://ha.local/tts/hello.wav", client: "home-assistant")
        _ = await core.remove([first.value.entry.ticket])
        _ = try await core.playAddress("http://ha.local/chime.wav", client: "home-assistant")
        #expect(try kept() == ["chime.wav"])
    }

    @Test(arguments: [(2047, true), (2048, true), (2049, false)])
    func anAddressOfUpTo2048CharactersIsTaken(length: Int, taken: Bool) {
        let address = "http://ha.local/" + String(repeating: "a", count: length - 16)
        #expect(address.utf8.count == length)
        #expect((MediaLimits.problem(address) == nil) == taken)
    }

    @Test func onlyHTTPAddressesWithAHostAreTaken() async throws {
        #expect(MediaLimits.problem("https://ha.local:8123/api/tts_proxy/x.flac?token=1") == nil)
        #expect(MediaLimits.problem("file:///etc/passwd") == #""file:///etc/passwd" is not an http:// or https:// address"#)
        #expect(MediaLimits.problem("http:///x.wav") == #""http:///x.wav" names no host (or holds a user name, which jukeboxd does not send)"#)
        #expect(MediaLimits.problem("http://ha.local/a b.wav") == #""http://ha.local/a b.wav" holds spaces or control characters, which an address may not"#)
        await #expect(throws: JukeboxError.invalidParameter(#""ftp://x/y" is not an http:// or https:// address"#)) {
            _ = try await core.playAddress("ftp://x/y", client: "home-assistant")
        }
    }

    @Test func withoutAFetcherAnAddressIsRefused() async throws {
        let session = await core.snapshot().catalog.session
        let bare = Jukebox.test(await ClipCatalog.probing(session, with: SndFileDecoder()), decoder: SndFileDecoder(), makeSink: { _, _ in NullSink() })
        await #expect(throws: JukeboxError.invalidParameter("this jukeboxd does not fetch media by address")) {
            _ = try await bare.playAddress("http://ha.local/tts/hello.wav", client: "home-assistant")
        }
    }
}
