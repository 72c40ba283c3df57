import Foundation
import JukeboxCore
import JukeboxTestSupport
import Logging
import Synchronization
import Testing
import JukeboxCoreTestSupport

/// The loudness figures' owner: its two limits (figures kept, and the bytes of the file that
/// keeps them) at, under and over, what survives a restart, and no work without a target.
@Suite("Clip loudness figures")
struct ClipLoudnessTests {
    /// Gives every file the same figure at once, counting the files it is asked for.
    final class CountingMeter: LoudnessMeter {
        let measured = Mutex<[String]>([])

        func measure(_ source: ClipSource, decoder: any ClipDecoder) async throws -> Loudness {
            measured.withLock { $0.append(FilePath.lastComponent(source.path)) }
            return Loudness(integrated: -30, truePeak: -20)
        }

        var count: Int { measured.withLock { $0.count } }
    }

    let folder: TemporaryDirectory
    var file: String { folder.file("state.loudness.json") }

    init() throws {
        folder = try TemporaryDirectory()
        for name in ["a", "b", "c", "d", "e"] { try folder.write("\(name)-\(String(repeating: "x", count: 40)).wav", text: name) }
    }

    func source(_ name: String) -> ClipSource {
        let file = "\(name)-\(String(repeating: "x", count: 40)).wav"
        return ClipSource(file: file, path: folder.file(file))
    }

    func figures(_ loudness: ClipLoudness, _ names: [String]) async -> [Bool] {
        await loudness.report(names.map(source)).figures.map { $0 != nil }
    }

    func make(_ meter: CountingMeter, _ limits: ClipLoudness.Limits) async -> ClipLoudness {
        let loudness = ClipLoudness(meter: meter, decoder: Fixtures.decoder([]), file: file, limits: limits, logger: .quiet)
        await loudness.adopt(target: -18, sources: [])
        return loudness
    }

    @Test func theFiguresKeptAreLimitedTheOldestGoingFirst() async throws {
        let meter = CountingMeter()
        let loudness = await make(meter, .init(entries: 3))
        // Under and at the limit: every figure is kept.
        for name in ["a", "b"] { await loudness.measureNow(source(name)) }
        #expect(await figures(loudness, ["a", "b"]) == [true, true])
        await loudness.measureNow(source("c"))
        #expect(await figures(loudness, ["a", "b", "c"]) == [true, true, true])
        // Over it: the one measured longest ago goes.
        await loudness.measureNow(source("d"))
        #expect(await figures(loudness, ["a", "b", "c", "d"]) == [false, true, true, true])
        #expect(await loudness.gain(for: source("d")) == 12)
        #expect(await loudness.gain(for: source("a")) == 0, "not measured: played as recorded")
        // A restart reads the same three back, and measures none of them again.
        let again = await make(meter, .init(entries: 3))
        #expect(await figures(again, ["a", "b", "c", "d"]) == [false, true, true, true])
        for name in ["b", "c", "d"] { await again.measureNow(source(name)) }
        #expect(meter.count == 4)
    }

    @Test func theFileNeverGrowsPastItsLimitAndIsReadBackWhole() async throws {
        // Far more than every figure needs: under the limit, all are kept.
        let roomy = CountingMeter()
        let all = await make(roomy, .init(fileBytes: 1 << 20))
        for name in ["a", "b", "c", "d", "e"] { await all.measureNow(source(name)) }
        let full = try folder.read("state.loudness.json").count
        #expect(await figures(all, ["a", "b", "c", "d", "e"]) == Array(repeating: true, count: 5))
        // At that size exactly, all still fit; a byte less and the oldest go until the rest fit.
        for (limit, kept) in [(full, 5), (full - 1, 4)] {
            unlink(file)
            let meter = CountingMeter()
            let loudness = await make(meter, .init(fileBytes: limit))
            for name in ["a", "b", "c", "d", "e"] { await loudness.measureNow(source(name)) }
            let size = try folder.read("state.loudness.json").count
            #expect(size <= limit, "\(size) bytes written under a limit of \(limit)")
            let present = await figures(loudness, ["a", "b", "c", "d", "e"])
            #expect(present.filter { $0 }.count <= kept && present.last == true, "\(present) under \(limit) bytes")
            // The next start reads what was written, whole.
            let restarted = await make(meter, .init(fileBytes: limit))
            #expect(await figures(restarted, ["a", "b", "c", "d", "e"]) == present)
        }
    }

    @Test func withoutATargetNothingIsMeasured() async throws {
        let meter = CountingMeter()
        let loudness = ClipLoudness(meter: meter, decoder: Fixtures.decoder([]), file: file, logger: .quiet)
        await loudness.adopt(target: nil, sources: [source("a")])
        #expect(await loudness.measureNow(source("a")) == nil)
        #expect(meter.count == 0)
        #expect(!FileManager.default.fileExists(atPath: file))
    }
}
