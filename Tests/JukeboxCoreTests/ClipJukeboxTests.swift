import JukeboxCore
import Testing
import JukeboxCoreTestSupport

@Suite("Scheduler", .timeLimit(.minutes(1)))
struct ClipJukeboxTests {
    let sink = FakeSink()
    let clock = ManualClock()

    func session(
        clips: [Clip], interval: ClosedRange<Duration> = .seconds(10) ... .seconds(20), activeHours: [TimeWindow] = [],
        duration: Duration? = nil, cue: ClipSource? = nil
    ) -> Session {
        Session(name: "test", sourcePath: "/clips/s.json", clipsDirectory: "/clips", interval: interval,
                activeHours: activeHours, duration: duration, cue: cue, clips: clips)
    }

    func clip(_ id: String, windows: [TimeWindow] = [], enabled: Bool = true) -> Clip {
        Clip(id: id, source: ClipSource(file: "\(id).wav", path: "/clips/\(id).wav"), windows: windows, enabled: enabled)
    }

    func make(
        _ session: Session, start: LocalTime = LocalTime(weekday: .mon, TimeOfDay("12:00")!), seed: UInt64 = 1,
        time: TimeSource? = nil
    ) -> (ClipJukebox, ClipPlayQueue) {
        let tags = Dictionary(uniqueKeysWithValues: session.clips.enumerated().map { ($1.id, $0 + 1) })
        var decoder = Fixtures.decoder(tags.map { ($0.key, $0.value, 100) })
        decoder.clips["/clips/cue.wav"] = FakeDecoder.Spec(tag: 99, frames: 20)
        let player = Player(sink: sink, decoder: decoder, clock: ManualClock(), logger: .quiet)
        let events = EventBus()
        let queue = ClipPlayQueue(player: player, events: events, time: TimeSource(clock: ManualClock()), logger: .quiet)
        let time = time ?? .driven(by: clock, start: start)
        let quiet = QuietHours(schedule: ScheduleBoard(session), queue: queue, events: events, time: time, logger: .quiet)
        let core = ClipJukebox(
            schedule: ScheduleBoard(session), queue: queue, quiet: quiet, events: events, time: time,
            generator: SeededGenerator(seed: seed), logger: .quiet)
        return (core, queue)
    }

    @Test func picksAfterRandomGapsWithoutRepeatsWithinACycle() async throws {
        let (core, queue) = make(session(clips: ["a", "b", "c", "d"].map { clip($0) }))
        let consumer = Task { try await queue.run() }
        let scheduler = Task { try await core.run() }
        var gaps: [Duration] = []
        for played in 1...12 {
            await clock.waitForSleepers(1)
            let before = clock.now
            clock.advanceToNextDeadline()
            gaps.append(before.duration(to: clock.now))
            await sink.wait(until: { events in events.reduce(0) { if case .write = $1 { $0 + 1 } else { $0 } } >= played * 2 })
        }
        let runs = await sink.writeRuns
        #expect(runs.count == 12)
        for cycle in 0..<3 { #expect(Set(runs[(cycle * 4)..<(cycle * 4 + 4)]) == [1, 2, 3, 4], "\(runs)") }
        #expect(gaps.allSatisfy { (.seconds(10) ... .seconds(20)).contains($0) }, "\(gaps)")
        #expect(Set(gaps).count > 1, "gaps are random, not fixed")
        scheduler.cancel()
        consumer.cancel()
    }

    /// From a 07:55 start with 10-minute gaps: nothing at 08:05 … 08:55, then "a" at 09:05.
    func expectNothingUntilNine(_ queue: ClipPlayQueue) async {
        for _ in 0..<6 {
            await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
        }
        await clock.waitForSleepers(1)
        #expect(await queue.waiting.isEmpty)
        clock.advanceToNextDeadline()
        await clock.waitForSleepers(1)
        #expect(await queue.waiting.map(\.clip.id) == ["a"])
    }

    @Test func outsideActiveHoursNothingIsPicked() async throws {
        let nineToTen = TimeWindow(from: TimeOfDay("09:00")!, to: TimeOfDay("10:00")!)
        let (core, queue) = make(
            session(clips: [clip("a")], interval: .seconds(600) ... .seconds(600), activeHours: [nineToTen]),
            start: LocalTime(weekday: .mon, TimeOfDay("07:55")!))
        let scheduler = Task { try await core.run() }
        // 08:05, 08:15 … 08:55: all outside; 09:05: inside.
        await expectNothingUntilNine(queue)
        scheduler.cancel()
    }

    /// In quiet hours the scheduler picks nothing, and saves nothing up: the first pick after
    /// them is one clip, at its usual gap.
    @Test func inQuietHoursNothingIsPickedOrSavedUp() async throws {
        var quiet = session(clips: [clip("a")], interval: .seconds(600) ... .seconds(600))
        quiet.quiet = [TimeWindow(from: TimeOfDay("08:00")!, to: TimeOfDay("09:00")!)]
        let (core, queue) = make(quiet, start: LocalTime(weekday: .mon, TimeOfDay("07:55")!))
        let scheduler = Task { try await core.run() }
        defer { scheduler.cancel() }
        // 08:05, 08:15 … 08:55: quiet; 09:05: a pick.
        await expectNothingUntilNine(queue)
        // A pick asked for by a client is someone asking: it still happens in quiet hours.
        let (asked, askedQueue) = make(quiet, start: LocalTime(weekday: .mon, TimeOfDay("08:30")!))
        #expect(await asked.pick() != nil)
        #expect(await askedQueue.waiting.count == 1)
    }

    @Test func scheduledPicksDoNotPileUpWhileNothingPlays() async throws {
        // No consumer runs, as when the device is missing: the first pick waits, later ones are skipped.
        let (core, queue) = make(session(clips: [clip("a"), clip("b"), clip("c")]))
        let scheduler = Task { try await core.run() }
        try await queue.enqueue(Fixtures.clip("a"), origin: .client("cli"))
        for _ in 0..<4 {
            await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
        }
        await clock.waitForSleepers(1)
        #expect(await queue.waiting.map(\.origin) == [.client("cli"), .scheduler])
        // A pick asked for explicitly still happens.
        #expect(await core.pick() != nil)
        scheduler.cancel()
    }

    @Test func clipsWithClosedWindowsWaitForTheirWindow() async throws {
        let evening = TimeWindow(from: TimeOfDay("18:00")!, to: TimeOfDay("19:00")!)
        let (core, queue) = make(session(clips: [clip("day"), clip("evening", windows: [evening]), clip("off", enabled: false)]))
        for _ in 0..<5 { await core.pick() }
        #expect(await queue.waiting.map(\.clip.id) == Array(repeating: "day", count: 5))
    }

    /// A clip that excepts the holidays is not picked on one; the others still are.
    @Test func holidaysAreSkippedByTheClipsThatExceptThem() async throws {
        var bell = clip("bell")
        bell.dates = DateFilter(except: [.holidays])
        var holidays = session(clips: [bell, clip("tune")])
        holidays.holidays = [try DateRule.parse("12-25", allowHolidays: false).get()]
        let christmas = TimeSource.standing(at: LocalTime(date: CivilDate(year: 2026, month: 12, day: 25)!, secondOfDay: 12 * 3600))
        let (core, queue) = make(holidays, time: christmas)
        for _ in 0..<4 { await core.pick() }
        #expect(await queue.waiting.map(\.clip.id) == Array(repeating: "tune", count: 4))
        let eve = TimeSource.standing(at: LocalTime(date: CivilDate(year: 2026, month: 12, day: 24)!, secondOfDay: 12 * 3600))
        let (other, otherQueue) = make(holidays, time: eve)
        for _ in 0..<4 { await other.pick() }
        #expect(await Set(otherQueue.waiting.map(\.clip.id)) == ["bell", "tune"])
    }

    /// A window from half an hour before sunset: in Amsterdam at midsummer the sun sets at
    /// about 22:06 CEST, so the window opens at about 21:36.
    @Test func aWindowAnchoredOnSunsetOpensWithTheSun() async throws {
        let evening = TimeWindow(from: try DayTime.parse("sunset-30m").get(), to: .clock(TimeOfDay("23:30")!))
        var sunset = session(clips: [clip("birds", windows: [evening])])
        sunset.location = GeoLocation(latitude: 52.37, longitude: 4.89)
        let midsummer = CivilDate(year: 2026, month: 6, day: 21)!
        func reading(_ clock: String) -> TimeSource {
            .standing(at: LocalTime(date: midsummer, secondOfDay: TimeOfDay(clock)!.minuteOfDay * 60, utcOffset: 7200))
        }
        let (early, earlyQueue) = make(sunset, time: reading("21:20"))
        #expect(await early.pick() == nil)
        #expect(await earlyQueue.waiting.isEmpty)
        let (late, lateQueue) = make(sunset, time: reading("21:50"))
        #expect(await late.pick() != nil)
        #expect(await lateQueue.waiting.map(\.clip.id) == ["birds"])
        // In December the same window has been open since about 16:00 (sunset about 16:29 CET).
        let (winter, _) = make(sunset, time: .standing(at: LocalTime(date: CivilDate(year: 2026, month: 12, day: 21)!, secondOfDay: 16 * 3600 + 15 * 60, utcOffset: 3600)))
        #expect(await winter.pick() != nil)
    }

    @Test func scheduledPicksCarryTheCue() async throws {
        let cue = ClipSource(file: "cue.wav", path: "/clips/cue.wav")
        let (core, queue) = make(session(clips: [clip("a"), clip("b")], cue: cue))
        let consumer = Task { try await queue.run() }
        let entry = try #require(await core.pick())
        #expect(entry.cue?.source == cue)
        #expect(entry.origin == .scheduler)
        await sink.wait(until: { $0.contains { if case .write(let tag, _) = $0 { tag != 99 } else { false } } })
        await sink.wait(until: { events in events.reduce(0) { if case .write(let t, let f) = $1, t != 99 { $0 + f } else { $0 } } == 100 })
        #expect(await sink.writeRuns.first == 99)
        #expect(await sink.writeRuns.count == 2)
        consumer.cancel()
    }

    @Test func sessionDurationEndsTheSchedulerAfterTheCurrentClip() async throws {
        let (core, queue) = make(session(clips: [clip("a"), clip("b")], interval: .seconds(10) ... .seconds(10), duration: .seconds(25)))
        let consumer = Task { try await queue.run() }
        let scheduler = Task { try await core.run() }
        for _ in 0..<3 {
            await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
        }
        try await scheduler.value
        #expect(clock.now.offset == .seconds(25))
        #expect(await queue.playedCount + queue.waiting.count == 2)
        consumer.cancel()
    }

    @Test func sameSeedSamePicks() async {
        func picks(seed: UInt64) async -> [String] {
            let (core, _) = make(session(clips: (0..<8).map { clip("c\($0)") }), seed: seed)
            var ids: [String] = []
            for _ in 0..<16 { ids.append(await core.pick()!.clip.id) }
            return ids
        }
        #expect(await picks(seed: 4) == picks(seed: 4))
        #expect(await picks(seed: 4) != picks(seed: 5))
    }
}
