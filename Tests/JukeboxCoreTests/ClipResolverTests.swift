import Glibc
import JukeboxSndFile
import JukeboxTestSupport
import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

@Suite("Clip names and paths", .timeLimit(.minutes(1)))
struct ClipResolverTests {
    let folder: TemporaryDirectory
    let resolver: ClipResolver

    init() throws {
        folder = try TemporaryDirectory()
        mkdir(folder.file("clips"), 0o755)
        mkdir(folder.file("clips/extra"), 0o755)
        try folder.write("clips/ward.wav", [0])
        try folder.write("clips/extra/bell.wav", [0])
        try folder.write("secret.wav", [0])
        symlink(folder.file("secret.wav"), folder.file("clips/sneaky.wav"))
        let clips = folder.file("clips")
        let session = Session(name: "t", sourcePath: "s.json", clipsDirectory: clips, clips: [
            Clip(id: "ward", source: ClipSource(file: "ward.wav", path: clips + "/ward.wav"), gainDecibels: -3),
            Clip(id: "broken", source: ClipSource(file: "broken.wav", path: clips + "/broken.wav")),
        ])
        resolver = ClipResolver(catalog: ClipCatalog(session: session, problems: ["broken": "broken.wav: no such file"]))
    }

    @Test func idsAndPathsOfSessionClipsGiveTheSessionClip() throws {
        #expect(try resolver.resolve("ward").gainDecibels == -3)
        #expect(try resolver.resolve("ward.wav").id == "ward")
        #expect(try resolver.resolve("extra/../ward.wav").gainDecibels == -3)
        #expect(try resolver.resolve(folder.file("clips/ward.wav")).id == "ward")
    }

    @Test func otherFilesInsideTheFolderPlay() throws {
        let clip = try resolver.resolve("extra/bell.wav")
        #expect(clip.id == "bell")
        #expect(clip.source.file == "extra/bell.wav")
    }

    @Test func pathsLeadingOutsideAreRefused() {
        for name in ["../secret.wav", "sneaky.wav", folder.file("secret.wav"), "/etc/passwd", "extra/../../secret.wav"] {
            #expect(throws: JukeboxError.outsideClipsDirectory(name), "\(name)") { try resolver.resolve(name) }
        }
    }

    @Test func unknownNamesGetSuggestions() {
        #expect(throws: JukeboxError.unknownClip("wrd", suggestions: ["ward"])) { try resolver.resolve("wrd") }
        #expect(throws: JukeboxError.unknownClip("nothing.wav", suggestions: [])) { try resolver.resolve("nothing.wav") }
        #expect(throws: JukeboxError.unplayable("broken", reason: "broken.wav: no such file")) { try resolver.resolve("broken") }
    }
}

/// Limits on what one request can cost.
extension ClipResolverTests {
    @Test func suggestionsStopAtSixtyFourCharacters() {
        let near = String(repeating: "w", count: 63) + "x"
        let clips = [Clip(id: String(repeating: "w", count: 64), source: ClipSource(file: "w.wav", path: "/w.wav"))]
        let resolver = ClipResolver(catalog: ClipCatalog(session: Session(name: "t", sourcePath: "s.json", clipsDirectory: "/", clips: clips)))
        #expect(resolver.suggestions(for: near) == [clips[0].id], "at the limit: suggested")
        #expect(resolver.suggestions(for: near + "w").isEmpty, "over it: not even looked at")
        #expect(resolver.suggestions(for: String(repeating: "q", count: 65_000)).isEmpty)
    }

    @Test func idsOutOfReachByLengthAreNotSuggested() {
        let ids = ["ward", "wardrobe-of-the-north-wind", "war"]
        let clips = ids.map { Clip(id: $0, source: ClipSource(file: "\($0).wav", path: "/\($0).wav")) }
        let resolver = ClipResolver(catalog: ClipCatalog(session: Session(name: "t", sourcePath: "s.json", clipsDirectory: "/", clips: clips)))
        #expect(resolver.suggestions(for: "wrd") == ["ward", "war"])
        #expect(resolver.suggestions(for: "Wardrobe") == ["wardrobe-of-the-north-wind"], "a shared start is suggested at any length")
    }

    /// The path is checked when it is queued; a symlink swapped in afterwards must not make
    /// the daemon open a file outside the folder when the entry plays.
    @Test func fileSwappedForASymlinkAfterTheCheckIsRefusedWhenOpened() async throws {
        let clip = try resolver.resolve("extra/bell.wav")
        #expect(clip.source.within == folder.file("clips"))
        try folder.write("outside.wav", WAVFile.bytes([0.1, 0.2], encoding: .s16, rate: 8000, channels: 1))
        unlink(folder.file("clips/extra/bell.wav"))
        symlink(folder.file("outside.wav"), folder.file("clips/extra/bell.wav"))
        await #expect(throws: ClipDecodeError(file: "extra/bell.wav", reason: "the file opened is outside the clips folder \(folder.file("clips")) (a symlink was swapped in); refused")) {
            _ = try await SndFileDecoder().open(clip.source)
        }
        // The same file named in the session itself is the session author's choice, and plays.
        let listed = ClipSource(file: "bell.wav", path: folder.file("clips/extra/bell.wav"))
        #expect(try await SndFileDecoder().open(listed).frameCount == 2)
    }
}
