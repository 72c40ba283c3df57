@testable import JukeboxCore
import Logging
import Testing
import JukeboxCoreTestSupport

@Suite("Play queue", .timeLimit(.minutes(1)))
struct ClipPlayQueueTests {
    let sink = FakeSink()
    let clock = ManualClock()
    let events = EventBus()

    func makeQueue(
        _ clips: [(String, Int, Int)], failing: [String: String] = [:], beforePlaying: ClipPlayQueue.BeforePlaying? = nil
    ) -> ClipPlayQueue {
        var decoder = Fixtures.decoder(clips)
        for (id, reason) in failing { decoder.clips["/clips/\(id).wav"]?.failure = reason }
        let player = Player(sink: sink, decoder: decoder, clock: ManualClock(), logger: .quiet)
        return ClipPlayQueue(player: player, events: events, time: TimeSource(clock: clock), logger: .quiet, beforePlaying: beforePlaying)
    }

    /// The device's problem while the queue waits for it, as the player (its owner) shows it.
    func deviceProblem(_ queue: ClipPlayQueue) async -> AudioDeviceError? {
        if case .retrying(_, let error) = await queue.player.device { error } else { nil }
    }

    func frames(_ tags: [Int], each: Int) -> @Sendable ([FakeSink.Event]) -> Bool {
        { events in
            tags.allSatisfy { tag in
                events.frames(tag: tag) >= each
            }
        }
    }

    @Test func concurrentEnqueuesPlayInAcceptanceOrderWithoutOverlap() async throws {
        let queue = makeQueue((1...8).map { ("c\($0)", $0, 300) })
        let consumer = Task { try await queue.run() }
        // Eight producers at once: the daemon's order is whatever order it accepted them in.
        let accepted = await withTaskGroup(of: QueueEntry.self) { group in
            for n in 1...8 { group.addTask { try! await queue.enqueue(Fixtures.clip("c\(n)"), origin: .client("client \(n)")).entry } }
            return await group.reduce(into: []) { $0.append($1) }.sorted { $0.ticket < $1.ticket }
        }
        await sink.wait(until: frames(Array(1...8), each: 300))
        let runs = await sink.writeRuns
        #expect(runs == accepted.map { Int($0.clip.id.dropFirst())! }, "each clip is one uninterrupted run, in ticket order")
        #expect(accepted.map(\.ticket) == Array(1...8))
        consumer.cancel()
        _ = try? await consumer.value
    }

    @Test func beforePlayingRunsRightBeforeEachClipInOrder() async throws {
        let sink = self.sink
        let queue = makeQueue([("a", 1, 100), ("b", 2, 100)]) { entry in await sink.mark("before \(entry.clip.id)") }
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler)
        try await queue.enqueue(Fixtures.clip("b"), origin: .scheduler)
        await sink.wait(until: frames([1, 2], each: 100))
        let steps = await sink.events.compactMap { event -> String? in
            switch event {
            case .mark(let text): text
            case .write(let tag, _): "clip \(tag)"
            default: nil
            }
        }
        let collapsed = steps.reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
        #expect(collapsed == ["before a", "clip 1", "before b", "clip 2"])
        consumer.cancel()
    }

    @Test func cuePlaysInTheSameSlotBeforeItsClip() async throws {
        let queue = makeQueue([("a", 1, 100), ("b", 2, 100), ("cue", 9, 40)])
        let consumer = Task { try await queue.run() }
        let cue = Fixtures.clip("cue")
        try await queue.enqueue(Fixtures.clip("a"), cue: cue, origin: .scheduler)
        try await queue.enqueue(Fixtures.clip("b"), origin: .client("cli"))
        try await queue.enqueue(Fixtures.clip("a"), cue: cue, origin: .scheduler)
        await sink.wait(until: { events in events.frames(tag: 1) == 200 })
        #expect(await sink.writeRuns == [9, 1, 2, 9, 1])
        consumer.cancel()
    }

    @Test func removedEntryIsSkippedAndTheRestKeepTheirOrder() async throws {
        let queue = makeQueue([("a", 1, 100), ("b", 2, 100), ("c", 3, 100)])
        await sink.gateWrites(true)
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler)
        let b = try await queue.enqueue(Fixtures.clip("b"), origin: .scheduler).entry
        try await queue.enqueue(Fixtures.clip("c"), origin: .scheduler)
        await sink.waitForGatedWrite()
        #expect(await queue.current?.clip.id == "a")
        #expect(await queue.remove(ticket: b.ticket))
        #expect(await queue.waiting.map(\.clip.id) == ["c"])
        #expect(await !queue.remove(ticket: 999))
        await sink.gateWrites(false)
        await sink.wait(until: frames([1, 3], each: 100))
        #expect(await sink.writeRuns == [1, 3])
        consumer.cancel()
    }

    @Test func badClipIsSkippedAndTheQueueGoesOn() async throws {
        let queue = makeQueue([("a", 1, 100), ("b", 2, 100), ("c", 3, 100)], failing: ["b": "not an audio file"])
        let consumer = Task { try await queue.run() }
        for id in ["a", "b", "c"] { try await queue.enqueue(Fixtures.clip(id), origin: .scheduler) }
        await sink.wait(until: frames([1, 3], each: 100))
        #expect(await sink.writeRuns == [1, 3])
        #expect(await queue.failedCount == 1)
        #expect(await queue.playedCount == 2)
        consumer.cancel()
    }

    @Test func deviceMissingAtStartKeepsTheClipAndRetriesWithBackoff() async throws {
        let busy = AudioDeviceError(code: .busy, device: "fake", operation: "open", reason: "Device or resource busy")
        await sink.failOpens([busy, busy, busy])
        let queue = makeQueue([("a", 1, 100)])
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler)
        for expected in [Duration.milliseconds(500), .seconds(1), .seconds(2)] {
            await clock.waitForSleepers(1)
            #expect(await deviceProblem(queue) == busy)
            #expect(await queue.current?.clip.id == "a", "the clip stays at the head of the queue")
            let before = clock.now
            clock.advanceToNextDeadline()
            #expect(before.duration(to: clock.now) == expected)
        }
        await sink.wait(until: frames([1], each: 100))
        #expect(await deviceProblem(queue) == nil)
        #expect(await sink.framesWritten(tag: 1) == 100)
        consumer.cancel()
    }

    /// A clip queued at its fixed time waits for a missing device only as long as `atGrace`:
    /// then it is not played late, and the queue goes on.
    @Test func aFixedTimeIsNotPlayedLateWhenTheDeviceComesBackTooLate() async throws {
        let busy = AudioDeviceError(code: .busy, device: "fake", operation: "open", reason: "Device or resource busy")
        await sink.failOpens(Array(repeating: busy, count: 5))
        let clock = clock
        let player = Player(sink: sink, decoder: Fixtures.decoder([("bell", 1, 100), ("b", 2, 100)]), clock: ManualClock(), logger: .quiet)
        let queue = ClipPlayQueue(
            player: player, events: events, time: TimeSource(clock: clock, wallClock: { 1_000_000 + clock.now.offset.secondsDouble }), logger: .quiet)
        await queue.configure(grace: StartGrace(onTime: .seconds(5), missed: .skip), afterCut: .resume)
        let consumer = Task { try await queue.run() }
        defer { consumer.cancel() }
        try await queue.enqueue(Fixtures.clip("bell"), origin: .fixedTime(1_000_000))
        try await queue.enqueue(Fixtures.clip("b"), origin: .client("phone"))
        // Retries after 0.5, 1, 2 and 4 s: 7.5 s after its time, longer than the grace.
        while await queue.history.isEmpty {
            await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
        }
        let record = try #require(await queue.history.first)
        #expect(record.entry.clip.id == "bell")
        #expect(record.outcome == .missed(reason: "the audio device was missing for longer after its time than a fixed time may still play: atGrace (5s)"))
        #expect(await queue.missedCount == 1)
        #expect(await queue.outcomes["missed"] == 1)
        await sink.wait(until: frames([2], each: 100))
        #expect(await sink.framesWritten(tag: 1) == 0)
    }

    @Test func deviceLostMidClipReplaysTheClipFromItsStart() async throws {
        let unplugged = AudioDeviceError(code: .disconnected, device: "fake", operation: "write", reason: "No such device")
        await sink.failWrite(at: 2, with: unplugged)
        let queue = makeQueue([("a", 1, 200), ("b", 2, 100)])
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler)
        try await queue.enqueue(Fixtures.clip("b"), origin: .scheduler)
        await clock.waitForSleepers(1)
        #expect(await queue.current?.clip.id == "a")
        #expect(await queue.waiting.map(\.clip.id) == ["b"])
        clock.advanceToNextDeadline()
        await sink.wait(until: frames([2], each: 100))
        let events = await sink.events
        let reopened = try #require(events.lastIndex(of: .close))
        #expect(events[..<reopened].filter { if case .write = $0 { true } else { false } }.count == 2)
        let afterwards = events[reopened...].frames(tag: 1)
        #expect(afterwards == 200, "the whole clip plays again after the device returns")
        #expect(await sink.writeRuns == [1, 2])
        consumer.cancel()
    }

    @Test func deviceLostWhileTheLastClipDrainsReplaysItAndCountsItOnce() async throws {
        let gone = AudioDeviceError(code: .disconnected, device: "fake", operation: "drain", reason: "Connection refused")
        await sink.failDrains([gone])
        let queue = makeQueue([("a", 1, 100)])
        let events = self.events.subscribe()
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler)
        await clock.waitForSleepers(1)
        #expect(await queue.current?.clip.id == "a", "its tail was not heard, so it stays at the head")
        #expect(await queue.playedCount == 0)
        #expect(await deviceProblem(queue) == gone)
        clock.advanceToNextDeadline()
        _ = await events.first { if case .finished = $0 { true } else { false } }
        #expect(await queue.playedCount == 1)
        #expect(await queue.history.map(\.outcome.name) == ["completed"])
        let written = await sink.events
        let reopened = try #require(written.lastIndex(of: .close))
        #expect(written[reopened...].frames(tag: 1) == 100, "the whole clip plays again")
        consumer.cancel()
    }

    @Test func shutdownWhileTheLastTailDrainsStillCountsTheClipOnce() async throws {
        await sink.holdDrains()
        let queue = makeQueue([("a", 1, 100)])
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler)
        await sink.wait(until: { $0.last == .drain })
        consumer.cancel()
        await sink.releaseDrains()
        try await consumer.value
        #expect(await queue.playedCount == 1)
        #expect(await queue.current == nil, "it will not play again after a restart")
        #expect(await queue.history.map(\.outcome.name) == ["completed"])
    }

    @Test func finishAfterCurrentLetsTheClipEndAndStartsNothingMore() async throws {
        let queue = makeQueue([("a", 1, 100), ("b", 2, 100)])
        await sink.gateWrites(true)
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler)
        try await queue.enqueue(Fixtures.clip("b"), origin: .scheduler)
        await sink.waitForGatedWrite()
        let finished = Task { await queue.finishAfterCurrent() }
        await sink.gateWrites(false)
        await finished.value
        #expect(await sink.framesWritten(tag: 1) == 100)
        #expect(await sink.framesWritten(tag: 2) == 0)
        #expect(await queue.waiting.map(\.clip.id) == ["b"], "what was waiting is kept, not dropped")
        consumer.cancel()
    }
}

/// Faults that used to stall or crash-loop the queue.
extension ClipPlayQueueTests {
    @Test func formatTheDeviceRefusesFailsThatClipAndTheQueueGoesOn() async throws {
        let refused = AudioDeviceError(code: .unsupportedFormat, device: "hw:0", operation: "play s16 2147483647 Hz 1 ch",
                                       reason: "it cannot play at 2147483647 Hz", hint: "use \"default\" or a plughw: device so ALSA converts the format")
        await sink.failOpens([refused])
        let queue = makeQueue([("odd", 1, 100), ("b", 2, 100)])
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("odd"), origin: .scheduler)
        try await queue.enqueue(Fixtures.clip("b"), origin: .scheduler)
        await sink.wait(until: frames([2], each: 100))
        #expect(await sink.writeRuns == [2])
        let record = try #require(await queue.history.first)
        #expect(record.outcome.name == "failed")
        #expect(record.outcome.reason == #"odd.wav: audio device "hw:0": cannot play s16 2147483647 Hz 1 ch: it cannot play at 2147483647 Hz (use "default" or a plughw: device so ALSA converts the format)"#)
        #expect(await deviceProblem(queue) == nil, "no retrying: the device is fine, the clip is not")
        consumer.cancel()
    }

    @Test func skipEndsAnEntryThatWaitsForItsDevice() async throws {
        let gone = AudioDeviceError(code: .notFound, device: "fake", operation: "open", reason: "No such device")
        await sink.failOpens(Array(repeating: gone, count: 50))
        let queue = makeQueue([("a", 1, 100), ("b", 2, 100)])
        let consumer = Task { try await queue.run() }
        try await queue.enqueue(Fixtures.clip("a"), origin: .scheduler)
        try await queue.enqueue(Fixtures.clip("b"), origin: .scheduler)
        await clock.waitForSleepers(1)
        #expect(await deviceProblem(queue) == gone)
        #expect(await queue.skip()?.clip.id == "a")
        // Without the clock moving, the skipped entry ends and the next one takes its place.
        await clock.waitForSleepers(1)
        #expect(await queue.history.map(\.entry.clip.id) == ["a"])
        #expect(await queue.history.map(\.outcome.name) == ["skipped"])
        #expect(await queue.current?.clip.id == "b")
        #expect(await queue.waiting.isEmpty)
        consumer.cancel()
    }

    @Test func entryThatWasPlayingAtTwoCrashesInARowIsFailedAndTheRestKept() async throws {
        let queue = makeQueue([("bad", 1, 100), ("b", 2, 100), ("c", 3, 100)])
        let entries = [("bad", 7), ("b", 8), ("c", 9)].map { QueueEntry(ticket: $1, clip: Fixtures.clip($0), origin: .scheduler) }
        await queue.restore(entries: entries, nextTicket: 10, stats: [:], history: [], started: .init(ticket: 7, count: 2))
        #expect(await queue.waiting.map(\.ticket) == [8, 9])
        let record = try #require(await queue.history.last)
        #expect(record.entry.ticket == 7)
        #expect(record.outcome == .failed(reason: "stopped the player twice; skipped"))
        #expect(await queue.failedCount == 1)
    }

    @Test func entryThatWasPlayingAtOneCrashIsTriedAgainAndItsStartIsSavedFirst() async throws {
        let sink = self.sink
        let queue = makeQueue([("bad", 1, 100), ("b", 2, 100)])
        await sink.gateWrites(true)
        await queue.setRiskyStartHook { await sink.mark("saved") }
        let entries = [("bad", 7), ("b", 8)].map { QueueEntry(ticket: $1, clip: Fixtures.clip($0), origin: .scheduler) }
        await queue.restore(entries: entries, nextTicket: 10, stats: [:], history: [], started: .init(ticket: 7, count: 1))
        let consumer = Task { try await queue.run() }
        await sink.waitForGatedWrite()
        #expect(await sink.events.first == .mark("saved"), "the second start is durable before the clip plays")
        #expect(await queue.persisted().started == .init(ticket: 7, count: 2))
        await sink.gateWrites(false)
        await sink.wait(until: frames([1, 2], each: 100))
        let after = await queue.persisted().started
        #expect(after == nil || after?.ticket == 8)
        #expect(await sink.events.filter { $0 == .mark("saved") }.count == 1, "only the first entry after the restart")
        consumer.cancel()
    }

    @Test func aStartMarkForAnotherEntryIsIgnored() async throws {
        let queue = makeQueue([("a", 1, 100)])
        await sink.gateWrites(true)
        await queue.restore(entries: [QueueEntry(ticket: 3, clip: Fixtures.clip("a"), origin: .scheduler)], nextTicket: 4,
                            stats: [:], history: [], started: .init(ticket: 2, count: 5))
        #expect(await queue.waiting.map(\.ticket) == [3])
        #expect(await queue.history.isEmpty)
        let consumer = Task { try await queue.run() }
        await sink.waitForGatedWrite()
        #expect(await queue.persisted().started == .init(ticket: 3, count: 1))
        await sink.gateWrites(false)
        consumer.cancel()
    }
}
