import JukeboxTestSupport
import Logging
import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// Quiet: the session's quiet hours, quiet set by hand (`on`, `off`, `for`), and requests
/// held until it ends. A manual clock whose wall time starts at a chosen moment, in Central
/// European time.
@Suite("Quiet hours and quiet by hand", .timeLimit(.minutes(1)))
struct QuietHoursTests {
    let clock = ManualClock()
    let jump = ClockJump()
    let events = EventBus()
    static let nights = [TimeWindow(from: TimeOfDay("22:00")!, to: TimeOfDay("07:00")!)]

    func clip(_ id: String) -> Clip { Clip(id: id, source: ClipSource(file: "\(id).wav", path: "/clips/\(id).wav")) }

    func make(start: Int64, quiet: [TimeWindow] = [], capacity: Int = 100) -> (QuietHours, ClipPlayQueue, WallClock) {
        let player = Player(sink: FakeSink(), decoder: Fixtures.decoder([]), clock: ManualClock(), logger: .quiet)
        let queue = ClipPlayQueue(player: player, events: events, time: TimeSource(clock: ManualClock()), capacity: capacity, logger: .quiet)
        let session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: [clip("a")], quiet: quiet)
        let clock = clock
        let wallClock: WallClock = { [jump] in Double(start + clock.now.offset.components.seconds + jump.value) }
        let hours = QuietHours(schedule: ScheduleBoard(session), queue: queue, events: events, time: TimeSource(clock: clock, wallClock: wallClock, zone: CentralEuropeanZone()), logger: .quiet)
        return (hours, queue, wallClock)
    }

    /// Advances the clock to the watcher's next look until the wall clock reaches `moment`.
    func run(until moment: Int64, _ wallClock: WallClock) async {
        while Int64(wallClock()) < moment {
            clock.advanceToNextDeadline()
            await clock.waitForSleepers()
        }
    }

    func hold(_ ids: [String], in queue: ClipPlayQueue) async throws -> [UInt64] {
        try await queue.hold(contentsOf: ids.map { PlayableClip(clip($0)) }, origin: .client("cli")).map(\.ticket)
    }

    /// Quiet hours hold a request until they end; then it is queued, and the status says when
    /// they begin again.
    @Test func aRequestHeldInQuietHoursIsQueuedWhenTheyEnd() async throws {
        // Friday 22:30 CET.
        let (hours, queue, wallClock) = make(start: LocalZoneTests.utc(2026, 11, 27, 21, 30), quiet: Self.nights)
        #expect(await hours.statusNow() == .init(quiet: true, byHand: false, until: LocalZoneTests.utc(2026, 11, 28, 6)))
        let seen = events.subscribe()
        let tickets = try await hold(["a", "a"], in: queue)
        let running = Task { try await hours.run() }
        defer { running.cancel() }
        await clock.waitForSleepers()
        await run(until: LocalZoneTests.utc(2026, 11, 28, 5, 59), wallClock)
        #expect(await queue.waiting.isEmpty, "06:59: still quiet")
        #expect(await queue.held.map(\.ticket) == tickets)
        await run(until: LocalZoneTests.utc(2026, 11, 28, 6), wallClock)
        #expect(await queue.held.isEmpty)
        #expect(await queue.waiting.map(\.ticket) == tickets, "queued in the order they came")
        #expect(await hours.statusNow() == .init(quiet: false, byHand: false, until: LocalZoneTests.utc(2026, 11, 28, 21)), "quiet again at 22:00")
        var names: [String] = []
        for await event in seen {
            switch event {
            case .held: names.append("held")
            case .queued(_, let position): names.append("queued \(position)")
            case .quiet(let status): names.append(status.quiet ? "quiet" : "not quiet")
            default: continue
            }
            if names.last == "not quiet" { break }
        }
        // Quiet at start-up is no news; the release comes before the news that quiet ended.
        #expect(names == ["held", "held", "queued 1", "queued 2", "not quiet"])
    }

    /// `off` lifts the quiet hours in force until they end, and no longer: the next night is
    /// quiet again.
    @Test func offLiftsQuietHoursUntilTheyEnd() async throws {
        let (hours, queue, wallClock) = make(start: LocalZoneTests.utc(2026, 11, 27, 22), quiet: Self.nights)
        _ = try await hold(["a"], in: queue)
        let lifted = await hours.set(.off)
        #expect(lifted == .init(quiet: false, byHand: true, until: LocalZoneTests.utc(2026, 11, 28, 6)))
        #expect(await queue.waiting.count == 1, "what was held plays now")
        let running = Task { try await hours.run() }
        defer { running.cancel() }
        await clock.waitForSleepers()
        await run(until: LocalZoneTests.utc(2026, 11, 28, 6), wallClock)
        #expect(await hours.override == nil, "over at 07:00")
        #expect(await hours.statusNow() == .init(quiet: false, byHand: false, until: LocalZoneTests.utc(2026, 11, 28, 21)))
        await run(until: LocalZoneTests.utc(2026, 11, 28, 21), wallClock)
        #expect(await hours.statusNow() == .init(quiet: true, byHand: false, until: LocalZoneTests.utc(2026, 11, 29, 6)), "22:00 the next night")
        // Quiet by hand in quiet hours: off lifts both, until the hours end.
        #expect(await hours.set(.on) == .init(quiet: true, byHand: true, until: nil))
        #expect(await hours.set(.off) == .init(quiet: false, byHand: true, until: LocalZoneTests.utc(2026, 11, 29, 6)))
    }

    /// The quiet hours in force are shown from when they began; otherwise the next ones.
    @Test func theQuietHoursInForceAreShownFromWhenTheyBegan() async throws {
        let (hours, _, _) = make(start: LocalZoneTests.utc(2026, 11, 27, 22), quiet: Self.nights)
        let night = await hours.nextHours(after: LocalZoneTests.utc(2026, 11, 27, 23))
        #expect(night?.from == LocalZoneTests.utc(2026, 11, 27, 21) && night?.to == LocalZoneTests.utc(2026, 11, 28, 6))
        let evening = await hours.nextHours(after: LocalZoneTests.utc(2026, 11, 28, 12))
        #expect(evening?.from == LocalZoneTests.utc(2026, 11, 28, 21) && evening?.to == LocalZoneTests.utc(2026, 11, 29, 6))
    }

    /// Two days across each clock change: quiet begins at 22:00 and ends at 07:00 on the
    /// local clock, whatever the offset.
    @Test(arguments: [
        (LocalZoneTests.utc(2026, 3, 28, 11), [LocalZoneTests.utc(2026, 3, 28, 21), LocalZoneTests.utc(2026, 3, 29, 5), LocalZoneTests.utc(2026, 3, 29, 20), LocalZoneTests.utc(2026, 3, 30, 5)]),
        (LocalZoneTests.utc(2026, 10, 24, 10), [LocalZoneTests.utc(2026, 10, 24, 20), LocalZoneTests.utc(2026, 10, 25, 6), LocalZoneTests.utc(2026, 10, 25, 21), LocalZoneTests.utc(2026, 10, 26, 6)]),
    ])
    func quietHoursKeepToTheLocalClockAcrossClockChanges(start: Int64, expected: [Int64]) async throws {
        let (hours, _, wallClock) = make(start: start, quiet: Self.nights)
        let running = Task { try await hours.run() }
        defer { running.cancel() }
        await clock.waitForSleepers()
        var changes: [Int64] = []
        var quiet = await hours.statusNow().quiet
        while Int64(wallClock()) < start + 2 * 86_400 {
            clock.advanceToNextDeadline()
            await clock.waitForSleepers()
            let now = await hours.statusNow().quiet
            if now != quiet { changes.append(Int64(wallClock())) }
            quiet = now
        }
        #expect(changes == expected)
    }

    /// `off` outside quiet hours ends quiet by hand and leaves nothing lifted.
    @Test func offOutsideQuietHoursLeavesNothingLifted() async throws {
        let (hours, _, _) = make(start: LocalZoneTests.utc(2026, 11, 27, 12), quiet: Self.nights)
        #expect(await hours.set(.on) == .init(quiet: true, byHand: true, until: nil))
        #expect(await hours.set(.off) == .init(quiet: false, byHand: false, until: LocalZoneTests.utc(2026, 11, 27, 21)))
        #expect(await hours.override == nil)
    }

    /// `for 30m` is quiet for thirty minutes, then what was held is queued.
    @Test func quietForAWhileEndsByItself() async throws {
        let start = LocalZoneTests.utc(2026, 11, 27, 12)
        let (hours, queue, wallClock) = make(start: start)
        #expect(await hours.set(.for(.seconds(1800))) == .init(quiet: true, byHand: true, until: start + 1800))
        _ = try await hold(["a"], in: queue)
        let running = Task { try await hours.run() }
        defer { running.cancel() }
        await clock.waitForSleepers()
        await run(until: start + 1740, wallClock)
        #expect(await queue.held.count == 1, "29 minutes: still quiet")
        await run(until: start + 1800, wallClock)
        #expect(await queue.held.isEmpty)
        #expect(await queue.waiting.count == 1)
        #expect(await hours.statusNow() == .init(quiet: false, byHand: false, until: nil))
    }

    /// `on` lasts until `off`; then held requests go behind what already waits, in order.
    @Test func heldRequestsGoBehindWhatWaits() async throws {
        let (hours, queue, _) = make(start: LocalZoneTests.utc(2026, 11, 27, 12))
        await hours.set(.on)
        let first = try await queue.enqueue(PlayableClip(clip("a")), origin: .client("now")).entry.ticket
        let held = try await hold(["a", "a"], in: queue)
        #expect(await hours.statusNow() == .init(quiet: true, byHand: true, until: nil))
        await hours.set(.off)
        #expect(await queue.waiting.map(\.ticket) == [first] + held)
    }

    /// Held requests count towards the queue's capacity, and `remove` and `clear` reach them.
    @Test func heldRequestsCountAndCanBeRemoved() async throws {
        let (_, queue, _) = make(start: LocalZoneTests.utc(2026, 11, 27, 12), capacity: 3)
        let held = try await hold(["a", "a"], in: queue)
        _ = try await queue.enqueue(PlayableClip(clip("a")), origin: .client("now"))
        await #expect(throws: QueueFullError.self) { try await queue.enqueue(PlayableClip(clip("a")), origin: .client("now")) }
        await #expect(throws: QueueFullError.self) { _ = try await hold(["a"], in: queue) }
        #expect(await queue.remove(ticket: held[0]))
        #expect(await queue.held.map(\.ticket) == [held[1]])
        #expect(await queue.clear().contains(held[1]))
        #expect(await queue.held.isEmpty)
    }
}

/// Quiet through the core: its limits, and what survives a restart.
@Suite("Quiet through the core", .timeLimit(.minutes(1)))
struct QuietCoreTests {
    let folder: TemporaryDirectory
    init() throws { folder = try TemporaryDirectory() }

    func makeCore() -> Jukebox {
        let session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: ["a", "b"].map {
            Clip(id: $0, source: ClipSource(file: "\($0).wav", path: "/clips/\($0).wav"))
        })
        return Jukebox.test(
            ClipCatalog(session: session), decoder: Fixtures.decoder([("a", 1, 10), ("b", 2, 10)]), stateFile: StateFile(path: folder.file("state.json")), time: TimeSource(clock: ManualClock(), wallClock: { 1_800_000_000 }, zone: FixedOffsetZone(seconds: 0)))
    }

    /// `for` takes from a minute to a week: at, under and over each end.
    @Test(arguments: [(59, false), (60, true), (7 * 86_400, true), (7 * 86_400 + 1, false)])
    func quietForTakesAMinuteToAWeek(seconds: Int, accepted: Bool) async throws {
        let core = makeCore()
        do {
            let status = try await core.durable(try await core.setQuiet(.for(.seconds(seconds))))
            #expect(accepted, "\(seconds) s was refused")
            #expect(status == .init(quiet: true, byHand: true, until: 1_800_000_000 + Int64(seconds)))
        } catch {
            #expect(!accepted, "\(seconds) s was accepted")
            #expect(error.description == "quiet lasts from 1m to 168h, not \(DurationText.format(.seconds(seconds)))")
        }
    }

    /// Quiet by hand and the requests held for its end are on disk before they are
    /// answered, and come back after a restart; a plain request plays meanwhile.
    @Test func quietByHandAndHeldRequestsSurviveARestart() async throws {
        let core = makeCore()
        await core.restoreState()
        _ = try await core.durable(try await core.setQuiet(.on))
        let held = try await core.durable(try await core.enqueue(["a"], cue: false, client: "cli", afterQuiet: true))
        #expect(held.map(\.position) == [nil])
        let now = try await core.durable(try await core.enqueue(["b"], cue: false, client: "cli"))
        #expect(now.map(\.position) == [1], "asked to play now: it plays now, quiet or not")
        let saved = String(decoding: try FilePath.read(folder.file("state.json"), limit: 1 << 20), as: UTF8.self)
        #expect(saved.contains(#""quiet":{"quiet":true}"#), "\(saved)")
        #expect(saved.contains(#""afterQuiet":true"#), "\(saved)")

        let restarted = makeCore()
        await restarted.restoreState()
        var snapshot = await restarted.snapshot()
        #expect(snapshot.quiet == .init(quiet: true, byHand: true, until: nil))
        #expect(snapshot.queue.held.map(\.ticket) == [held[0].entry.ticket])
        #expect(snapshot.queue.waiting.map(\.ticket) == [now[0].entry.ticket])
        _ = try await restarted.durable(try await restarted.setQuiet(.off))
        snapshot = await restarted.snapshot()
        #expect(snapshot.queue.held.isEmpty)
        #expect(snapshot.queue.waiting.map(\.ticket) == [now[0].entry.ticket, held[0].entry.ticket])
        let after = String(decoding: try FilePath.read(folder.file("state.json"), limit: 1 << 20), as: UTF8.self)
        #expect(!after.contains("afterQuiet") && !after.contains(#""quiet":{"#), "\(after)")
    }

    /// Home Assistant's "next play": the first fixed time not skipped for quiet, or the next
    /// pick unless it falls outside active hours or in quiet, whichever comes first.
    @Test func nextPlayIsTheFirstThingThatWillBeHeard() {
        let bell = Clip(id: "bell", source: ClipSource(file: "bell.wav", path: "/clips/bell.wav"))
        let open = QuietHours.Status(quiet: false, byHand: false, until: nil)
        var plan = JukeboxPlan(
            fixedTimes: [.init(moment: 100, clip: bell, quiet: true), .init(moment: 300, clip: bell, quiet: false)], nextPick: 200,
            activeHours: nil, quiet: open, quietHours: nil, location: nil, sun: [])
        #expect(plan.nextPlay == 200)
        plan.pickSkippedFor = .quiet
        #expect(plan.nextPlay == 300, "a pick that falls outside active hours or in quiet is not heard")
        plan.fixedTimes = []
        #expect(plan.nextPlay == nil)
    }

    /// Asked to wait for the end of quiet when it is not quiet, a request is queued at once.
    @Test func afterQuietWhenItIsNotQuietQueuesAtOnce() async throws {
        let core = makeCore()
        let accepted = try await core.durable(try await core.enqueue(["a"], cue: false, client: "cli", afterQuiet: true))
        #expect(accepted.map(\.position) == [1])
    }
}
