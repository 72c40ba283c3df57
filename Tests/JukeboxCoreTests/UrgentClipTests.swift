@testable import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxTestSupport
import Testing

/// Urgent entries (`now`): they cut the clip playing where it is heard, play in the order
/// they were asked for, and the cut clip then goes on as the session's `afterCut` says.
/// Clips are at 1000 frames a second, written in blocks of 64; the fade is 10 frames.
@Suite("Urgent clips cut in", .timeLimit(.minutes(1)))
struct UrgentClipTests {
    let sink = FakeSink()
    let events = EventBus()

    func makeQueue(_ clips: [(String, Int, Int)], counting: [String] = []) -> ClipPlayQueue {
        var decoder = Fixtures.decoder(clips)
        for id in counting { decoder.clips["/clips/\(id).wav"]?.counting = true }
        let player = Player(sink: sink, decoder: decoder, clock: ManualClock(), logger: .quiet)
        return ClipPlayQueue(player: player, events: events, time: TimeSource(clock: ManualClock(), wallClock: { 1_000 }), logger: .quiet)
    }

    /// Every write as [first sample, frames]: for a counting clip the first sample is its frame.
    func writes(_ sink: FakeSink? = nil) async -> [[Int]] {
        await (sink ?? self.sink).events.compactMap { if case .write(let tag, let frames) = $0 { [tag, frames] } else { nil } }
    }

    /// Which clip each run of writes came from: a tag of `names`, or else `long`, the
    /// counting clip.
    func runs(_ names: [Int: String], of sink: FakeSink? = nil) async -> [String] {
        var runs: [String] = []
        for write in await writes(sink) {
            let name = names[write[0]] ?? "long"
            if runs.last != name { runs.append(name) }
        }
        return runs
    }

    /// Plays `long` (counting, 1000 frames) until three blocks are through and the fourth is
    /// held, then queues `bell` (tag 7, 100 frames) with `now`, and lets the held block go.
    /// The device still holds 40 frames when the clip is cut, so it was heard to frame 216.
    func cutLongByBell(_ queue: ClipPlayQueue) async throws -> QueueEntry {
        await sink.gateWrites(true)
        await sink.setUnplayedOnCancel(40)
        try await queue.enqueue(Fixtures.clip("long"), origin: .client("cli"))
        await sink.letWritesThrough(3)
        let bell = try await queue.enqueue(Fixtures.clip("bell"), origin: .client("door"), urgent: true)
        #expect(bell.position == 1)
        await sink.releaseOneWrite()
        await sink.gateWrites(false)
        return bell.entry
    }

    @Test func anUrgentClipCutsTheClipPlayingWhichGoesOnFromWhereItWasHeardTo() async throws {
        let queue = makeQueue([("long", 0, 1000), ("bell", 7, 100)], counting: ["long"])
        let consumer = Task { try await queue.run() }
        let subscription = events.subscribe()
        _ = try await cutLongByBell(queue)
        await sink.wait(until: { $0.contains(.write(tag: 994, frames: 6)) })
        // Four blocks of the long clip (0…255), 40 frames of them unheard; the bell whole;
        // then the long clip from frame 216, rising from silence over the 10-frame fade,
        // and on to its end.
        let written = await writes()
        #expect(Array(written.prefix(9)) == [[0, 64], [64, 64], [128, 64], [192, 64], [7, 64], [7, 36], [0, 10], [226, 64], [290, 64]])
        #expect(await runs([7: "bell"]) == ["long", "bell", "long"])
        while await queue.history.count < 2 { await Task.yield() }
        #expect(await queue.history.map { "\($0.entry.clip.id) \($0.outcome.name)" } == ["bell completed", "long completed"])
        var seen: [String] = []
        for await event in subscription {
            switch event {
            case .queued(let entry, let position): seen.append("queued \(entry.clip.id)\(entry.urgent ? " now" : "") \(position)")
            case .cut(let entry, let position): seen.append("cut \(entry.clip.id) \(position) from \(entry.resumeAt?.frame ?? -1)")
            case .playing(let entry): seen.append("playing \(entry.clip.id)")
            case .finished(let play): seen.append("finished \(play.entry.clip.id) \(play.outcome.name)")
            default: continue
            }
            if seen.last == "finished long completed" { break }
        }
        #expect(seen == ["queued long 1", "playing long", "queued bell now 1", "cut long 2 from 216", "playing bell", "finished bell completed", "playing long", "finished long completed"])
        consumer.cancel()
    }

    @Test func urgentEntriesPlayInTheOrderAskedAndTheWaitingOnesKeepTheirOrderAfterTheCutClip() async throws {
        let queue = makeQueue([("a", 1, 1000), ("b", 2, 100), ("c", 3, 100), ("u1", 4, 100), ("u2", 5, 100)])
        await sink.gateWrites(true)
        let consumer = Task { try await queue.run() }
        for id in ["a", "b", "c"] { try await queue.enqueue(Fixtures.clip(id), origin: .scheduler) }
        await sink.waitForGatedWrite()
        #expect(try await queue.enqueue(Fixtures.clip("u1"), origin: .client("cli"), urgent: true).position == 1)
        #expect(try await queue.enqueue(Fixtures.clip("u2"), origin: .client("cli"), urgent: true).position == 2)
        // A fixed time that comes now waits behind the urgent entries and the clip they cut.
        try await queue.enqueue(Fixtures.clip("c"), origin: .fixedTime(1_000))
        #expect(await queue.waiting.map(\.clip.id) == ["u1", "u2", "c", "b", "c"])
        await sink.gateWrites(false)
        await sink.wait(until: { $0.frames(tag: 3) == 200 })
        let written = await writes()
        // `a` goes on with a fade-in, whose first sample the ramp brings to 0.
        #expect(await sink.writeRuns == [1, 4, 5, 0, 1, 3, 2, 3], "\(written)")
        #expect(await sink.framesWritten(tag: 1) + 10 == 1000, "the cut clip played on to its end, nothing twice: \(written)")
        consumer.cancel()
    }

    @Test func anUrgentEntryDoesNotCutAnotherUrgentEntry() async throws {
        let queue = makeQueue([("u1", 4, 500), ("u2", 5, 100)])
        await sink.gateWrites(true)
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("u1"), origin: .client("cli"), urgent: true)
        await sink.waitForGatedWrite()
        try await queue.enqueue(Fixtures.clip("u2"), origin: .client("cli"), urgent: true)
        await sink.gateWrites(false)
        await sink.wait(until: { $0.frames(tag: 5) == 100 })
        #expect(await sink.writeRuns == [4, 5])
        #expect(await sink.framesWritten(tag: 4) == 500)
        consumer.cancel()
    }

    @Test(arguments: [AfterCut.restart, .drop])
    func theCutClipIsPlayedAgainFromItsStartOrDroppedAsTheSessionSays(afterCut: AfterCut) async throws {
        let queue = makeQueue([("long", 0, 1000), ("bell", 7, 100), ("next", 9, 100)], counting: ["long"])
        await queue.configure(grace: StartGrace(onTime: .seconds(120), missed: .skip), afterCut: afterCut)
        let consumer = Task { try await queue.run() }
        _ = try await cutLongByBell(queue)
        try await queue.enqueue(Fixtures.clip("next"), origin: .scheduler)
        await sink.wait(until: { $0.frames(tag: 9) == 100 })
        while await queue.history.count < 3 { await Task.yield() }
        let written = await writes()
        switch afterCut {
        case .restart:
            // Again from frame 0, with no fade-in (nothing of it is playing), to its end.
            #expect(await runs([7: "bell", 9: "next"]) == ["long", "bell", "long", "next"], "\(written)")
            #expect(written.filter { $0 == [0, 64] }.count == 2, "\(written)")
            #expect(!written.contains([0, 10]), "no fade-in: \(written)")
            #expect(await queue.history.map { "\($0.entry.clip.id) \($0.outcome.name)" } == ["bell completed", "long completed", "next completed"])
        default:
            #expect(await runs([7: "bell", 9: "next"]) == ["long", "bell", "next"], "\(written)")
            #expect(await queue.history.map { "\($0.entry.clip.id) \($0.outcome.name)" } == ["long skipped", "bell completed", "next completed"])
        }
        consumer.cancel()
    }

    @Test func aPausedClipCutByAnUrgentOneStaysPausedAndTheUrgentOnePlaysOnResume() async throws {
        let queue = makeQueue([("long", 0, 1000), ("bell", 7, 100)], counting: ["long"])
        await sink.gateWrites(true)
        await sink.setUnplayedOnCancel(40)
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("long"), origin: .client("cli"))
        await sink.letWritesThrough(3)
        await queue.pause()
        await sink.releaseOneWrite()
        while await queue.snapshot().pausedPosition == nil { await Task.yield() }
        await sink.gateWrites(false)
        try await queue.enqueue(Fixtures.clip("bell"), origin: .client("door"), urgent: true)
        // The cut clip waits after the bell, at the frame the pause left it at.
        while await queue.current != nil { await Task.yield() }
        #expect(await queue.waiting.map(\.clip.id) == ["bell", "long"])
        #expect(await queue.waiting.last?.resumeAt?.frame == 216)
        #expect(await queue.isPaused)
        #expect(await sink.framesWritten(tag: 7) == 0, "nothing plays while paused")
        await queue.resume()
        await sink.wait(until: { $0.contains(.write(tag: 994, frames: 6)) })
        #expect(await runs([7: "bell"]) == ["long", "bell", "long"])
        #expect(Array(await writes().dropFirst(4).prefix(4)) == [[7, 64], [7, 36], [0, 10], [226, 64]])
        consumer.cancel()
    }

    @Test func whileTheUrgentEntryPlaysTheStateListsItFirstAndTheCutClipAfterItWithItsPlace() async throws {
        let queue = makeQueue([("long", 0, 1000), ("bell", 7, 100), ("later", 3, 100)], counting: ["long"])
        let consumer = Task { try await queue.run() }
        await sink.gateWrites(true)
        await sink.setUnplayedOnCancel(40)
        try await queue.enqueue(Fixtures.clip("long"), origin: .client("cli"))
        try await queue.enqueue(Fixtures.clip("later"), origin: .client("cli"))
        await sink.letWritesThrough(3)
        try await queue.enqueue(Fixtures.clip("bell"), origin: .client("door"), urgent: true)
        // Asked for, and not yet cut in: the state already lists the bell first.
        #expect(await queue.persisted().entries.map(\.clip.id) == ["bell", "long", "later"])
        await sink.releaseOneWrite()
        // The bell plays, held in its first write.
        await sink.waitForGatedWrite()
        #expect(await queue.current?.clip.id == "bell")
        let saved = await queue.persisted().entries.map(PersistedState.Entry.init)
        #expect(saved.map(\.clip.id) == ["bell", "long", "later"])
        #expect(saved.map(\.now) == [true, nil, nil])
        #expect(saved[1].resumeAt == .init(frame: 216, seconds: 0.216))
        consumer.cancel()
        await sink.gateWrites(false)
        try? await consumer.value

        // A daemon killed there comes back with the bell first, then the long clip from 216.
        let state = PersistedState(nextTicket: 9, waiting: saved)
        let folder = try TemporaryDirectory()
        let file = StateFile(path: folder.file("state.json"))
        _ = try await file.save(state)
        guard case .loaded(let read) = await file.load() else { Issue.record("the state was not read back"); return }
        #expect(read.waiting == saved)
        let restarted = FakeSink()
        var decoder = Fixtures.decoder([("long", 0, 1000), ("bell", 7, 100), ("later", 3, 100)])
        decoder.clips["/clips/long.wav"]?.counting = true
        let again = ClipPlayQueue(
            player: Player(sink: restarted, decoder: decoder, clock: ManualClock(), logger: .quiet),
            time: TimeSource(clock: ManualClock(), wallClock: { 1_000 }), logger: .quiet)
        await again.restore(entries: read.waiting.map(\.queueEntry), nextTicket: read.nextTicket, stats: [:], history: [])
        let second = Task { try await again.run() }
        await restarted.wait(until: { $0.frames(tag: 3) == 100 })
        #expect(await runs([7: "bell", 3: "later"], of: restarted) == ["bell", "long", "later"])
        #expect(Array(await writes(restarted).prefix(4)) == [[7, 64], [7, 36], [0, 10], [226, 64]])
        second.cancel()
    }
}

/// A request of several urgent clips goes in in one step: two such requests at once, while
/// a clip plays, each stay together, before the clip they cut.
@Suite("Urgent requests of several clips", .timeLimit(.minutes(1)))
struct UrgentRequestTests {
    @Test func twoRequestsOfSeveralUrgentClipsAtOnceEachStayTogether() async throws {
        let sink = FakeSink()
        let player = Player(sink: sink, decoder: Fixtures.decoder([("long", 0, 100_000)]), clock: ManualClock(), logger: .quiet)
        let queue = ClipPlayQueue(player: player, time: TimeSource(clock: ManualClock(), wallClock: { 1_000 }), logger: .quiet)
        await sink.gateWrites(true)
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("long"), origin: .client("cli"))
        await sink.waitForGatedWrite()
        async let first = queue.enqueue(contentsOf: ["a1", "a2", "a3"].map(Fixtures.clip), origin: .client("a"), urgent: true)
        async let second = queue.enqueue(contentsOf: ["b1", "b2", "b3"].map(Fixtures.clip), origin: .client("b"), urgent: true)
        let (a, b) = try await (first, second)
        let waiting = await queue.persisted().entries.map(\.clip.id)
        #expect(waiting == ["a1", "a2", "a3", "b1", "b2", "b3", "long"] || waiting == ["b1", "b2", "b3", "a1", "a2", "a3", "long"], "\(waiting)")
        // Each request's positions run on from its first.
        #expect(a.map(\.position) == Array(a[0].position..<(a[0].position + 3)))
        #expect(b.map(\.position) == Array(b[0].position..<(b[0].position + 3)))
        consumer.cancel()
        await sink.gateWrites(false)
        _ = try? await consumer.value
    }
}
