import FoundationEssentials
import JukeboxSndFile
import JukeboxTestSupport
import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// An upload must keep a pace, or it loses its place among the two received at once: the
/// first byte within 30 s, then 10 KiB in each 10 s window. At, under and over each, on the
/// manual clock.
@Suite("Upload pace", .timeLimit(.minutes(1)))
struct UploadPaceTests {
    let folder: TemporaryDirectory
    let clock = ManualClock()
    let core: Jukebox
    typealias Pace = ClipUpload.Pace

    init() async throws {
        folder = try TemporaryDirectory()
        let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 800, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
        try folder.write("water.wav", tone)
        let path = try folder.write("s.json", text: #"{ "maxUploadSize": 1000000, "clips": [ { "file": "water.wav" } ] }"#)
        let session = try SessionLoader.load(path: path)
        core = Jukebox.test(
            await ClipCatalog.probing(session, with: SndFileDecoder()), decoder: SndFileDecoder(), makeSink: { _, _ in NullSink() },
            loadSession: { () throws(SessionLoadError) -> Session in try SessionLoader.load(path: path) },
            time: TimeSource(clock: clock, wallClock: { 1_000 }))
    }

    func uploadFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".upload-") }
    }

    @Test func theFirstByteMustComeWithinThirtySeconds() async throws {
        // Under: a byte a moment before the deadline keeps it.
        let kept = try await core.beginUpload(name: "kept.wav", size: 100_000)
        await clock.waitForSleeper(until: clock.now.advanced(by: Pace.window))
        clock.advance(by: Pace.firstByteWithin - .milliseconds(1))
        try await kept.write([1])
        #expect(await kept.droppedReason == nil)
        await kept.discard()
        // At the deadline with no byte: dropped, its file gone, its place free.
        let silent = try await core.beginUpload(name: "silent.wav", size: 100_000)
        await clock.waitForSleeper(until: clock.now.advanced(by: Pace.window))
        clock.advance(by: Pace.firstByteWithin)
        while await silent.droppedReason == nil { await Task.yield() }
        #expect(await silent.droppedReason == "no byte of it came within 30s")
        #expect(try uploadFiles().isEmpty)
        await #expect(throws: JukeboxError.self) { try await silent.write([1]) }
        // Both places are free again: the dropped one gave its own back.
        let first = try await core.beginUpload(name: "a.wav", size: 10)
        let second = try await core.beginUpload(name: "b.wav", size: 10)
        await first.discard()
        await second.discard()
    }

    @Test func eachWindowMustBringTenKilobytes() async throws {
        let upload = try await core.beginUpload(name: "slow.wav", size: 100_000)
        // At the pace: exactly 10 KiB in the first window (from the first byte).
        try await upload.write(Array(repeating: 0, count: Pace.minimumBytesPerWindow))
        await clock.waitForSleeper(until: clock.now.advanced(by: Pace.window))
        clock.advance(by: Pace.window)
        await clock.waitForSleeper(until: clock.now.advanced(by: Pace.window))
        #expect(await upload.droppedReason == nil)
        // Over it in the second: fine too.
        try await upload.write(Array(repeating: 0, count: Pace.minimumBytesPerWindow + 1))
        clock.advance(by: Pace.window)
        await clock.waitForSleeper(until: clock.now.advanced(by: Pace.window))
        #expect(await upload.droppedReason == nil)
        // Under it in the third: dropped at the window's end, without another byte.
        try await upload.write(Array(repeating: 0, count: Pace.minimumBytesPerWindow - 1))
        clock.advance(by: Pace.window)
        while await upload.droppedReason == nil { await Task.yield() }
        #expect(await upload.droppedReason == "it came at 10239 bytes in 10s, under the 10 KiB an upload must bring in each")
        #expect(try uploadFiles().isEmpty)
        do {
            try await upload.write([1])
            Issue.record("a dropped upload took more bytes")
        } catch {
            #expect("\(error)".contains("the upload of slow.wav was dropped: it came at 10239 bytes"), "\(error)")
        }
    }

    /// A client that sends its bytes late is told at its next bytes, when the windows that
    /// ended meanwhile are counted.
    @Test func aWindowThatEndedShortIsCountedAtTheNextBytes() async throws {
        let upload = try await core.beginUpload(name: "late.wav", size: 100_000)
        try await upload.write([1])
        await clock.waitForSleeper(until: clock.now.advanced(by: Pace.window))
        // The window ends; the bytes come before the sleeper has looked.
        clock.advance(by: Pace.window)
        do {
            try await upload.write(Array(repeating: 0, count: 20_000))
            Issue.record("the bytes after a short window were taken")
        } catch {
            #expect("\(error)".contains("it came at 1 bytes in 10s"), "\(error)")
        }
        while await upload.droppedReason == nil { await Task.yield() }
        #expect(try uploadFiles().isEmpty)
    }
}
