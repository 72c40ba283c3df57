import FoundationEssentials
import Glibc
import JukeboxSndFile
import JukeboxTestSupport
import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// Uploads in the core, without sockets: the limits, and that nothing is left behind.
@Suite("Uploads", .timeLimit(.minutes(1)))
struct UploadTests {
    let folder: TemporaryDirectory
    let core: Jukebox
    let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 800, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)

    init() async throws {
        folder = try TemporaryDirectory()
        try folder.write("water.wav", tone)
        let path = try folder.write("s.json", text: #"{ "maxUploadSize": 4096, "clips": [ { "file": "water.wav" } ] }"#)
        let session = try SessionLoader.load(path: path)
        core = Jukebox.test(
            await ClipCatalog.probing(session, with: SndFileDecoder()), decoder: SndFileDecoder(), makeSink: { _, _ in NullSink() }, loadSession: { () throws(SessionLoadError) -> Session in try SessionLoader.load(path: path) })
    }

    /// Files in the clips folder other than the session and its backup.
    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix("s.json") && !$0.hasPrefix(".s.json") }.sorted()
    }

    @Test func anUploadOverTheLimitIsRefusedBeforeAnyByteIsStored() async throws {
        await #expect(throws: JukeboxError.uploadTooLarge(name: "big.wav", size: 4097, limit: 4096)) {
            _ = try await core.beginUpload(name: "big.wav", size: 4097)
        }
        _ = try await core.beginUpload(name: "limit.wav", size: 4096).discard()
        #expect(try files() == ["water.wav"])
    }

    @Test func moreBytesThanAnnouncedOrFewerAreRefusedAndLeaveNothing() async throws {
        let over = try await core.beginUpload(name: "a.wav", size: 10)
        await #expect(throws: JukeboxError.uploadRefused("more than the 10 bytes announced for a.wav arrived")) { try await over.write([UInt8](repeating: 0, count: 11)) }
        await over.discard()
        let short = try await core.beginUpload(name: "b.wav", size: tone.count)
        try await short.write(Array(tone.prefix(100)))
        await #expect(throws: JukeboxError.uploadRefused("only 100 of the \(tone.count) bytes of b.wav arrived")) {
            _ = try await core.addClip(upload: short, fields: [:])
        }
        #expect(try files() == ["water.wav"])
    }

    @Test func aStoredUploadNeverOverwritesAndGetsASafeName() async throws {
        let upload = try await core.beginUpload(name: "../.water.wav", size: tone.count)
        try await upload.write(tone)
        let added = try await core.addClip(upload: upload, fields: ["title": .string("Again")])
        #expect(added.value.clip?.clip.source.file == "water-2.wav")
        #expect(added.value.clip?.clip.id == "water-2")
        #expect(try files() == ["water-2.wav", "water.wav"])
        #expect(try folder.read("water-2.wav") == tone)
    }

    /// Without ffmpeg, a file libsndfile cannot read is refused with what it looks like and
    /// what to do; and a refused edit (an id in use) removes the stored file again.
    /// An upload named as the session's temporary file or backup used to be stored under that
    /// name, and the next edit of the session then removed or overwrote it: the clip was gone.
    @Test(arguments: ["s.json.tmp", "s.json.bak", ".s.json.tmp", ".s.json.bak"])
    func anUploadNamedAsTheSessionsTemporaryFileOrBackupSurvivesTheNextEdit(name: String) async throws {
        let upload = try await core.beginUpload(name: name, size: tone.count)
        try await upload.write(tone)
        let added = try await core.addClip(upload: upload, fields: ["id": .string("kept")])
        let stored = try #require(added.value.clip?.clip.source.file)
        #expect(!stored.hasPrefix("."), "stored names never start with a dot: \(stored)")
        // Two more edits: each writes a temporary file and a backup.
        _ = try await core.edit(.updateClip(id: "kept", ["title": .string("Kept")]))
        _ = try await core.edit(.updateClip(id: "kept", ["title": .string("Kept still")]))
        #expect(try folder.read(stored) == tone, "\(stored) is the upload, whole")
        #expect(FilePath.isRegularFile(folder.file(".s.json.bak")))
        #expect(!FilePath.isRegularFile(folder.file(".s.json.tmp")))
    }

    /// A 273 KB FLAC of 20 minutes of 384 kHz 7.1 took 8.5 s of CPU to check, then 201. The
    /// length, the rate and the channels are checked before any frame is decoded, and no more
    /// frames are decoded than the length allows, whatever the header says.
    @Test(arguments: [
        (8000, 8000, 1, nil), (7999, 8000, 1, nil),
        (8001, 8000, 1, "a.wav is longer than the 1s accepted (the session's maxUploadLength; raise it to add a longer clip)"),
        (100, 192_000, 1, nil), (100, 192_001, 1, "a.wav is sampled at 192001 Hz; at most 192000 Hz is accepted (convert it to 48000 Hz)"),
        (100, 8000, 8, nil), (100, 8000, 9, "a.wav has 9 channels; at most 8 are accepted (mix it down to stereo or mono)"),
    ] as [(Int, Int, Int, String?)])
    func anUploadIsCheckedWithinTheSessionsLengthRateAndChannels(frames: Int, rate: Int, channels: Int, refusal: String?) async throws {
        let folder = try TemporaryDirectory()
        try folder.write("water.wav", tone)
        let path = try folder.write("s.json", text: #"{ "maxUploadLength": "1s", "clips": [ { "file": "water.wav" } ] }"#)
        let session = try SessionLoader.load(path: path)
        let core = Jukebox.test(
            await ClipCatalog.probing(session, with: SndFileDecoder()), decoder: SndFileDecoder(), makeSink: { _, _ in NullSink() }, loadSession: { () throws(SessionLoadError) -> Session in try SessionLoader.load(path: path) })
        let bytes = WAVFile.bytes(Array(repeating: 0.25, count: frames * channels), encoding: .s16, rate: rate, channels: channels)
        let upload = try await core.beginUpload(name: "a.wav", size: bytes.count)
        try await upload.write(bytes)
        if let refusal {
            await #expect(throws: JukeboxError.unplayable("a.wav", reason: refusal)) { _ = try await core.addClip(upload: upload, fields: [:]) }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("a") || $0.hasPrefix(".upload") }.isEmpty)
        } else {
            #expect(try await core.addClip(upload: upload, fields: [:]).value.clip?.clip.id == "a")
        }
    }

    @Test func aMaxUploadLengthOutsideItsRangeIsAProblemOfTheSession() throws {
        for (text, ok) in [("\"1s\"", true), ("\"3h\"", true), ("\"0.5s\"", false), ("\"3h1s\"", false), ("\"soon\"", false)] {
            let path = try folder.write("l.json", text: #"{ "maxUploadLength": \#(text), "clips": [ { "file": "water.wav" } ] }"#)
            do {
                let session = try SessionLoader.load(path: path)
                #expect(ok, "\(text) was accepted")
                #expect(session.maxUploadLength <= .seconds(3 * 3600))
            } catch {
                #expect(!ok, "\(text): \(error.problems)")
                #expect(error.problems.first?.contains("maxUploadLength") == true, "\(error.problems)")
            }
        }
    }

    @Test func refusedUploadsLeaveNothing() async throws {
        let m4a: [UInt8] = [0, 0, 0, 0x20] + Array("ftypM4A ".utf8) + [UInt8](repeating: 0, count: 52)
        let recording = try await core.beginUpload(name: "memo.m4a", size: m4a.count)
        try await recording.write(m4a)
        do {
            _ = try await core.addClip(upload: recording, fields: [:])
            Issue.record("an M4A was accepted without ffmpeg")
        } catch {
            guard case .unplayable("memo.m4a", let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.hasPrefix("memo.m4a is an MP4/M4A file (AAC audio, as phones and voice memo apps record), which libsndfile cannot read"), "\(reason)")
            #expect(reason.hasSuffix("install ffmpeg on jukeboxd's machine (sudo apt-get install ffmpeg) so jukeboxd converts it, or convert it to WAV or FLAC yourself"))
        }
        // A large recording is described as well: only its first bytes are looked at.
        let session = try SessionLoader.parse(Array(#"{ "maxUploadSize": 4000000, "clips": [ { "file": "water.wav" } ] }"#.utf8), path: folder.file("s.json"))
        let roomy = Jukebox.test(
            await ClipCatalog.probing(session, with: SndFileDecoder()), decoder: SndFileDecoder(), makeSink: { _, _ in NullSink() }, time: TimeSource(clock: ManualClock()))
        let long = m4a + [UInt8](repeating: 0, count: 3_000_000)
        let large = try await roomy.beginUpload(name: "long.m4a", size: long.count)
        try await large.write(long)
        do {
            _ = try await roomy.addClip(upload: large, fields: [:])
            Issue.record("a 3 MB M4A was accepted without ffmpeg")
        } catch {
            guard case .unplayable(_, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.hasPrefix("long.m4a is an MP4/M4A file"), "\(reason)")
        }
        let taken = try await core.beginUpload(name: "new.wav", size: tone.count)
        try await taken.write(tone)
        await #expect(throws: JukeboxError.invalidParameter("the id \"water\" is already used by the clip of water.wav; give another id")) {
            _ = try await core.addClip(upload: taken, fields: ["id": .string("water")])
        }
        #expect(try files() == ["water.wav"])
    }

    @Test(arguments: [
        ("../../etc/passwd", "passwd"), (".bashrc", "bashrc"), ("a\u{1}b\n.wav", "ab.wav"), ("", "upload"), ("...", "upload"),
        (String(repeating: "x", count: 200) + ".wav", String(repeating: "x", count: 96) + ".wav"),
        (" .session.json.bak", "session.json.bak"), (". . .x.wav", "x.wav"), (" \u{202E}.x", "x"),
        ("evil\u{202E}vaw.exe", "evilvaw.exe"), ("a\u{85}b\u{2028}c\u{2029}d\u{200B}.wav", "abcd.wav"), ("👨\u{200D}👩.wav", "👨\u{200D}👩.wav"),
    ])
    func safeNames(name: String, stored: String) {
        #expect(ClipUpload.safeName(name) == stored)
    }
}
