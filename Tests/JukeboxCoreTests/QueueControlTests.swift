@testable import JukeboxCore
import Testing
import JukeboxCoreTestSupport

@Suite("Queue control: skip, clear, pause, history, limits, events", .timeLimit(.minutes(1)))
struct QueueControlTests {
    let sink = FakeSink()
    let events = EventBus()

    func makeQueue(_ clips: [(String, Int, Int)], capacity: Int = 100, counting: Bool = false) -> ClipPlayQueue {
        var decoder = Fixtures.decoder(clips)
        if counting { for key in decoder.clips.keys { decoder.clips[key]?.counting = true } }
        let player = Player(sink: sink, decoder: decoder, clock: ManualClock(), logger: .quiet)
        return ClipPlayQueue(
            player: player, events: events, time: TimeSource(clock: ManualClock(), wallClock: { 1_000 }), capacity: capacity, logger: .quiet)
    }

    @Test func skipStopsTheCurrentClipAndTheQueueGoesOn() async throws {
        let queue = makeQueue([("a", 1, 10_000), ("b", 2, 100)])
        await sink.gateWrites(true)
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler)
        try await queue.enqueue(Fixtures.clip("b"), origin: .scheduler)
        await sink.waitForGatedWrite()
        #expect(await queue.skip()?.clip.id == "a")
        await sink.gateWrites(false)
        await sink.wait(until: { $0.contains(.write(tag: 2, frames: 36)) })
        #expect(await sink.framesWritten(tag: 1) < 10_000)
        #expect(await sink.writeRuns == [1, 2])
        let history = await queue.history.map { ($0.entry.clip.id, $0.outcome) }
        #expect(history.map(\.0) == ["a", "b"])
        #expect(history.map(\.1) == [.stopped, .completed(duration: .milliseconds(100))])
        #expect(await queue.skip() == nil)
        consumer.cancel()
    }

    @Test func pauseStopsMidClipAndResumeContinuesFromTheFirstUnheardFrame() async throws {
        let queue = makeQueue([("long", 0, 1000)], counting: true)
        await sink.gateWrites(true)
        await sink.setUnplayedOnCancel(40)
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("long"), origin: .client("cli"))
        // Let three blocks (frames 0–191) through, then pause during the fourth.
        await sink.letWritesThrough(3)
        await queue.pause()
        await sink.releaseOneWrite()
        await sink.wait(until: { $0.contains(.cancel) })
        #expect(await queue.isPaused)
        // The device is stopped before the player reports where; the queue then keeps it.
        while await queue.snapshot().pausedPosition == nil { await Task.yield() }
        #expect(await queue.snapshot().pausedPosition?.elapsed == .milliseconds(216), "status shows where it stopped")
        await sink.gateWrites(false)
        await queue.resume()
        await sink.wait(until: { $0.contains(.write(tag: 994, frames: 6)) })
        // Four blocks of 64 were written (0…255); 40 were still in the device when paused,
        // so playback resumes at frame 216 with a 10 ms (10-frame) fade-in block, whose first
        // sample the ramp brings to 0; the next block starts at 216 + 10.
        let writes = await sink.events.compactMap { if case .write(let tag, let frames) = $0 { [tag, frames] } else { nil } }
        #expect(writes.prefix(7) == [[0, 64], [64, 64], [128, 64], [192, 64], [0, 10], [226, 64], [290, 64]])
        consumer.cancel()
    }

    @Test func pausedQueueStartsNothingNewUntilResumed() async throws {
        let queue = makeQueue([("a", 1, 100)])
        let consumer = Task { try await queue.run() }
        await queue.pause()
        try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler)
        let subscription = events.subscribe()
        await queue.resume()
        await sink.wait(until: { events in events.frames(tag: 1) == 100 })
        var seen: [String] = []
        for await event in subscription {
            switch event {
            case .resumed: seen.append("resumed")
            case .playing(let entry): seen.append("playing \(entry.clip.id)")
            case .finished(let play): seen.append("finished \(play.entry.clip.id)")
            default: continue
            }
            if seen.count == 3 { break }
        }
        #expect(seen == ["resumed", "playing a", "finished a"])
        consumer.cancel()
    }

    @Test func clearDropsWaitingEntriesButNotTheCurrentClip() async throws {
        let queue = makeQueue([("a", 1, 100), ("b", 2, 100), ("c", 3, 100)])
        await sink.gateWrites(true)
        let consumer = Task { try await queue.run() }
        let tickets = try await ["a", "b", "c"].asyncMap { try await queue.enqueue(Fixtures.clip($0), origin: .scheduler).entry.ticket }
        await sink.waitForGatedWrite()
        #expect(await queue.clear() == Array(tickets.dropFirst()))
        await sink.gateWrites(false)
        await sink.wait(until: { events in events.frames(tag: 1) == 100 })
        #expect(await queue.waiting.isEmpty)
        #expect(await sink.writeRuns == [1])
        consumer.cancel()
    }

    @Test func queueRefusesEntriesBeyondItsCapacity() async throws {
        let queue = makeQueue([("a", 1, 100)], capacity: 3)
        for position in 1...3 { #expect(try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler).position == position) }
        await #expect(throws: QueueFullError(capacity: 3)) { try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler) }
        #expect(await queue.waiting.count == 3)
    }

    @Test func statsCountCompletedPlaysOnly() async throws {
        let queue = makeQueue([("a", 1, 100), ("b", 2, 100)])
        let consumer = Task { try await queue.run() }
        for id in ["a", "b", "a"] { try await queue.enqueue(Fixtures.clip(id), origin: .scheduler) }
        await sink.wait(until: { events in events.frames(tag: 1) == 200 })
        await sink.wait(until: { $0.last == .drain })
        #expect(await queue.stats["a"]?.timesPlayed == 2)
        #expect(await queue.stats["b"]?.timesPlayed == 1)
        #expect(await queue.stats["a"]?.lastPlayed == 1_000)
        #expect(await queue.playedCount == 3)
        consumer.cancel()
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
