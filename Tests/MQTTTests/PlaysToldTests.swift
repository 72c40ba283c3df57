import JukeboxCore
import JukeboxTestSupport
import Logging
@testable import JukeboxMQTT
import Testing

/// MQTT keeps its own count of the plays it has told of, in a file beside the state: kept
/// across a restart, and read with care when it is missing, foreign or ahead of the history.
@Suite("MQTT: the plays told")
struct PlaysToldTests {
    let folder: TemporaryDirectory
    init() throws { folder = try TemporaryDirectory() }

    var path: String { PlaysTold.file(besideState: folder.file("state.json")) }

    @Test func theCountIsKeptInAFileOfItsOwnAndReadAfterARestart() async throws {
        #expect(path == folder.file("state.mqtt-told"))
        let first = PlaysTold(path: path, logger: .init(label: "test"))
        // No file yet: what earlier runs played is not told; what this run played is.
        await first.load(earlierRuns: 10, lastPlay: 12)
        #expect(await first.through == 10)
        await first.mark(13)
        await first.mark(11)
        #expect(await first.through == 13, "never back")
        #expect(String(decoding: try folder.read(FilePath.lastComponent(path)), as: UTF8.self) == "jukeboxd-mqtt-told 13\n")
        let again = PlaysTold(path: path, logger: .init(label: "test"))
        await again.load(earlierRuns: 20, lastPlay: 20)
        #expect(await again.through == 13, "plays 14 to 20 are told after the restart")
    }

    @Test func aFileItDidNotWriteOrOneAheadOfTheHistoryStartsFromNow() async throws {
        for text in ["something else\n", "jukeboxd-mqtt-told lots\n", "jukeboxd-mqtt-told 99\n", String(repeating: "x", count: 10_000)] {
            _ = try folder.write(FilePath.lastComponent(path), text: text)
            let told = PlaysTold(path: path, logger: .init(label: "test"))
            await told.load(earlierRuns: 18, lastPlay: 20)
            #expect(await told.through == 18, "\(text.prefix(30))")
        }
    }
}
