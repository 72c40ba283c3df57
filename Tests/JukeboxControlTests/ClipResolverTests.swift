import Glibc
import JukeboxCore
import JukeboxProtocol
import JukeboxTestSupport
import Testing
@testable import JukeboxControl

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
            #expect(throws: RPCError.outsideClipsDirectory(name), "\(name)") { try resolver.resolve(name) }
        }
    }

    @Test func unknownNamesGetSuggestions() {
        #expect(throws: RPCError.unknownClip("wrd", suggestions: ["ward"])) { try resolver.resolve("wrd") }
        #expect(throws: RPCError.unknownClip("nothing.wav", suggestions: [])) { try resolver.resolve("nothing.wav") }
        #expect(throws: RPCError.unplayable("broken", "broken.wav: no such file")) { try resolver.resolve("broken") }
    }
}
