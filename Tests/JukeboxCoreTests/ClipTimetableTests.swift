@testable import JukeboxCore
import Synchronization
import Testing
import JukeboxCoreTestSupport

/// Seconds added to a test's wall clock by hand, as when NTP sets a Pi's clock after boot.
final class ClockJump: Sendable {
    private let seconds = Atomic<Int64>(0)
    var value: Int64 {
        get { seconds.load(ordering: .relaxed) }
        set { seconds.store(newValue, ordering: .relaxed) }
    }
}

/// `at` times, on a manual clock whose wall time starts at a chosen moment, in Central
/// European time (written out in `CentralEuropeanZone`, so no `TZ` is touched).
@Suite("Fixed times", .timeLimit(.minutes(1)))
struct ClipTimetableTests {
    let clock = ManualClock()
    let jump = ClockJump()

    func clip(_ id: String, at times: [String], enabled: Bool = true) throws -> Clip {
        var clip = Clip(id: id, source: ClipSource(file: "\(id).wav", path: "/clips/\(id).wav"), enabled: enabled)
        clip.at = try times.map { try FixedTime.parse($0).get() }
        return clip
    }

    func make(_ clips: [Clip], start: Int64, grace: Duration = .seconds(120), quiet: [TimeWindow] = [], missed: MissedTimes = .skip) -> (ClipTimetable, ClipPlayQueue) {
        let (timetable, queue, _) = makeWithQuiet(clips, start: start, grace: grace, quiet: quiet, missed: missed)
        return (timetable, queue)
    }

    func makeWithQuiet(
        _ clips: [Clip], start: Int64, grace: Duration = .seconds(120), quiet: [TimeWindow] = [], missed: MissedTimes = .skip
    ) -> (ClipTimetable, ClipPlayQueue, QuietHours) {
        let player = Player(sink: FakeSink(), decoder: Fixtures.decoder([]), clock: ManualClock(), logger: .quiet)
        let events = EventBus()
        let queue = ClipPlayQueue(player: player, events: events, time: TimeSource(clock: ManualClock()), logger: .quiet)
        var session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: clips, atGrace: grace, quiet: quiet)
        session.missed = missed
        let clock = clock
        let wallClock: WallClock = { [jump] in Double(start + clock.now.offset.components.seconds + jump.value) }
        let quietHours = QuietHours(schedule: ScheduleBoard(session), queue: queue, events: events, time: TimeSource(clock: clock, wallClock: wallClock, zone: CentralEuropeanZone()), logger: .quiet)
        let timetable = ClipTimetable(
            schedule: ScheduleBoard(session), queue: queue, quiet: quietHours, time: TimeSource(clock: clock, wallClock: wallClock, zone: CentralEuropeanZone()), logger: .quiet)
        return (timetable, queue, quietHours)
    }

    /// Moves the clock to the timetable's next look, and returns once it sleeps again.
    func step() async {
        clock.advanceToNextDeadline()
        await clock.waitForSleepers()
    }

    func settled() async { await clock.waitForSleepers() }

    @Test func aClipIsQueuedAtItsTimeAndOnlyOnItsDays() async throws {
        // Friday 2026-11-27, 07:50 CET.
        let start = LocalZoneTests.utc(2026, 11, 27, 6, 50)
        let (timetable, queue) = make([try clip("bell", at: ["07:55@mon-fri"])], start: start)
        let running = Task { try await timetable.run() }
        defer { running.cancel() }
        await settled()
        #expect(await timetable.next?.moment == LocalZoneTests.utc(2026, 11, 27, 6, 55))
        while await queue.waiting.isEmpty { await step() }
        #expect(await queue.waiting.map(\.clip.id) == ["bell"])
        #expect(await queue.waiting.first?.origin == .fixedTime(LocalZoneTests.utc(2026, 11, 27, 6, 55)))
        #expect(clock.now.offset == .seconds(300), "queued at its minute, not later")
        await settled()
        // Next: Monday, not Saturday.
        #expect(await timetable.next?.moment == LocalZoneTests.utc(2026, 11, 30, 6, 55))
    }

    /// A fixed time goes ahead of clips waiting in the queue, behind other fixed times.
    @Test func aFixedTimeGoesAheadOfWaitingClips() async throws {
        let start = LocalZoneTests.utc(2026, 11, 27, 6, 59)
        let (timetable, queue) = make([try clip("chime", at: ["*:00"]), try clip("bell", at: ["08:00"])], start: start)
        let fake = PlayableClip(id: "request", source: ClipSource(file: "r.wav", path: "/clips/r.wav"))
        try await queue.enqueue(fake, origin: .client("phone"))
        try await queue.enqueue(fake, origin: .client("phone"))
        let running = Task { try await timetable.run() }
        defer { running.cancel() }
        await settled()
        while await queue.waiting.count < 4 { await step() }
        #expect(await queue.waiting.map(\.clip.id) == ["chime", "bell", "request", "request"])
    }

    /// A clip with `"priority": "now"` is queued urgent at its time, ahead of everything,
    /// other fixed times included; one without it waits behind them.
    @Test func aFixedTimeWithPriorityNowIsQueuedUrgent() async throws {
        let start = LocalZoneTests.utc(2026, 11, 27, 6, 59)
        var bell = try clip("bell", at: ["08:00"])
        bell.priority = .now
        let (timetable, queue) = make([try clip("chime", at: ["*:00"]), bell], start: start)
        let fake = PlayableClip(id: "request", source: ClipSource(file: "r.wav", path: "/clips/r.wav"))
        try await queue.enqueue(fake, origin: .client("phone"))
        let running = Task { try await timetable.run() }
        defer { running.cancel() }
        await settled()
        while await queue.waiting.count < 3 { await step() }
        #expect(await queue.waiting.map(\.clip.id) == ["bell", "chime", "request"])
        #expect(await queue.waiting.map(\.urgent) == [true, false, false])
    }

    /// Within the grace a time missed by a restart still plays; beyond it, it is not played late.
    @Test func aTimeMissedByLongerThanTheGraceIsNotPlayedLate() async throws {
        let bell = try clip("bell", at: ["07:55"])
        let (soon, soonQueue) = make([bell], start: LocalZoneTests.utc(2026, 11, 27, 6, 56))
        let running = Task { try await soon.run() }
        await settled()
        #expect(await soonQueue.waiting.map(\.clip.id) == ["bell"])
        running.cancel()

        let (late, lateQueue) = make([bell], start: LocalZoneTests.utc(2026, 11, 27, 6, 58))
        let other = Task { try await late.run() }
        defer { other.cancel() }
        await settled()
        #expect(await lateQueue.waiting.isEmpty)
        #expect(await late.next?.moment == LocalZoneTests.utc(2026, 11, 28, 6, 55))
    }

    /// Times that passed while the daemon was stopped are found at the next start, up to a
    /// week back: each missed one is in the history (and so told) as missed, with the reason,
    /// and one that fell in quiet hours as skipped, for quiet.
    @Test func timesPassedWhileStoppedAreMissedUpToAWeekBackAndQuietOnesSkipped() async throws {
        let quiet = [TimeWindow(from: TimeOfDay("22:00")!, to: TimeOfDay("07:00")!)]
        // Friday 2026-11-27, 08:30 CET; stopped since Friday 06:00 CET.
        let (timetable, queue) = make(
            [try clip("bell", at: ["07:55"]), try clip("owl", at: ["06:30"])], start: LocalZoneTests.utc(2026, 11, 27, 7, 30), quiet: quiet)
        await timetable.restore(handledUntil: LocalZoneTests.utc(2026, 11, 27, 5))
        let history = await queue.history
        #expect(history.map(\.entry.clip.id) == ["owl", "bell"])
        #expect(history.map(\.outcome.name) == ["skipped", "missed"])
        #expect(history.map(\.entry.origin) == [.fixedTime(LocalZoneTests.utc(2026, 11, 27, 5, 30)), .fixedTime(LocalZoneTests.utc(2026, 11, 27, 6, 55))])
        #expect(history[0].outcome == .notPlayed(reason: "quiet at its time; it is not saved up for afterwards"))
        #expect(history[1].outcome.reason == "it was due 35m ago (jukeboxd was not running, or the clock jumped), longer than atGrace (2m); not played late")
        #expect(history.map(\.seq) == [1, 2])
        #expect(await queue.missedCount == 1)
        #expect(await queue.waiting.isEmpty)

        // Stopped ten days: the last seven days' times are looked at, no more.
        let (week, weekQueue) = make([try clip("bell", at: ["07:55"])], start: LocalZoneTests.utc(2026, 11, 27, 7, 30))
        await week.restore(handledUntil: LocalZoneTests.utc(2026, 11, 17, 7, 30))
        #expect(await weekQueue.history.map(\.entry.origin) == (21...27).map { .fixedTime(LocalZoneTests.utc(2026, 11, $0, 6, 55)) })
        #expect(await weekQueue.missedCount == 7)

        // An hourly time over the same stop: 168 moments in the week. The first 10 are in the
        // history one by one (and told); the rest are counted.
        let (hourly, hourlyQueue) = make([try clip("chime", at: ["*:00"])], start: LocalZoneTests.utc(2026, 11, 27, 7, 30))
        await hourly.restore(handledUntil: LocalZoneTests.utc(2026, 11, 17, 7, 30))
        #expect(await hourlyQueue.history.count == 10)
        #expect(await hourlyQueue.missedCount == 168)
        #expect(await hourlyQueue.outcomes["missed"] == 168)
    }

    /// `missed: play-late`: a time passed while stopped plays at the start, if within
    /// `playLateWithin`; of several of one clip only the last, the others missed.
    @Test func playLatePlaysTheLastPassedTimeOfAClipOnceWithinItsLimit() async throws {
        let bell = try clip("bell", at: ["07:55"])
        // 08:30 CET, stopped since 06:00: 35 minutes late, within an hour.
        let (soon, soonQueue) = make([bell], start: LocalZoneTests.utc(2026, 11, 27, 7, 30), missed: .playLate(within: .seconds(3600)))
        await soon.restore(handledUntil: LocalZoneTests.utc(2026, 11, 27, 5))
        #expect(await soonQueue.waiting.map(\.origin) == [.fixedTime(LocalZoneTests.utc(2026, 11, 27, 6, 55))])
        #expect(await soonQueue.history.isEmpty)
        // Stopped three days, with two days' limit: today's plays; yesterday's is within the
        // limit but is not played twice over, and the one before is past it.
        let (days, daysQueue) = make([bell], start: LocalZoneTests.utc(2026, 11, 27, 7, 30), missed: .playLate(within: .seconds(172_800)))
        await days.restore(handledUntil: LocalZoneTests.utc(2026, 11, 24, 7, 30))
        #expect(await daysQueue.waiting.map(\.origin) == [.fixedTime(LocalZoneTests.utc(2026, 11, 27, 6, 55))])
        let missed = await daysQueue.history
        #expect(missed.map(\.entry.origin) == [.fixedTime(LocalZoneTests.utc(2026, 11, 25, 6, 55)), .fixedTime(LocalZoneTests.utc(2026, 11, 26, 6, 55))])
        #expect(missed.map(\.outcome.reason) == [
            "it was due 48h35m ago (jukeboxd was not running, or the clock jumped), longer than playLateWithin (48h); not played late",
            "it was due 24h35m ago, and a later time of it is played late instead",
        ])
        // Past the limit: missed, not played.
        let (late, lateQueue) = make([bell], start: LocalZoneTests.utc(2026, 11, 27, 8, 56), missed: .playLate(within: .seconds(3600)))
        await late.restore(handledUntil: LocalZoneTests.utc(2026, 11, 27, 5))
        #expect(await lateQueue.waiting.isEmpty)
        #expect(await lateQueue.history.map(\.outcome.name) == ["missed"])
    }

    /// A time in quiet hours is skipped, not saved up; one outside them plays.
    @Test func aTimeInQuietHoursIsSkipped() async throws {
        let quiet = [TimeWindow(from: TimeOfDay("22:00")!, to: TimeOfDay("07:00")!)]
        // Friday 20:50 CET; the clip is due at 21:00, 23:00 and 06:30.
        let (timetable, queue) = make(
            [try clip("owl", at: ["21:00", "23:00", "06:30"])], start: LocalZoneTests.utc(2026, 11, 27, 19, 50), quiet: quiet)
        let running = Task { try await timetable.run() }
        defer { running.cancel() }
        await settled()
        while await timetable.next?.moment != LocalZoneTests.utc(2026, 11, 28, 20) { await step() }
        #expect(await queue.waiting.map(\.origin) == [.fixedTime(LocalZoneTests.utc(2026, 11, 27, 20))])
    }

    /// `jukebox next` lists the coming times in order, clips due together in the session's
    /// order, up to its limit and within its horizon.
    @Test func thePlanListsTheComingTimesInOrder() async throws {
        // Friday 06:50 CET.
        let (timetable, _) = make(
            [try clip("bell", at: ["07:55@mon-fri"]), try clip("chime", at: ["12:00", "07:55"]), try clip("monday", at: ["09:00@mon"])],
            start: LocalZoneTests.utc(2026, 11, 27, 5, 50))
        let plan = await timetable.plan(limit: 5, horizon: 7 * 86_400)
        #expect(plan.map(\.clip.id) == ["bell", "chime", "chime", "chime", "chime"])
        #expect(plan.map(\.moment) == [
            LocalZoneTests.utc(2026, 11, 27, 6, 55), LocalZoneTests.utc(2026, 11, 27, 6, 55), LocalZoneTests.utc(2026, 11, 27, 11),
            LocalZoneTests.utc(2026, 11, 28, 6, 55), LocalZoneTests.utc(2026, 11, 28, 11),
        ])
        #expect(await timetable.plan(limit: 1, horizon: 7 * 86_400).count == 1)
        let monday = await timetable.plan(limit: 100, horizon: 7 * 86_400).filter { $0.clip.id == "monday" }
        #expect(monday.map(\.moment) == [LocalZoneTests.utc(2026, 11, 30, 8)])
        #expect(await timetable.plan(limit: 100, horizon: 86_400).allSatisfy { $0.clip.id != "monday" }, "Monday is beyond a day")
    }

    /// Quiet turned on by hand skips a time as quiet hours do; turned off, the next plays.
    @Test func aTimeWhileQuietByHandIsSkipped() async throws {
        // Friday 20:50 CET; the clip is due at 21:00 and 22:00.
        let (timetable, queue, quiet) = makeWithQuiet([try clip("owl", at: ["21:00", "22:00"])], start: LocalZoneTests.utc(2026, 11, 27, 19, 50))
        await quiet.set(.on)
        let running = Task { try await timetable.run() }
        defer { running.cancel() }
        await settled()
        while await timetable.next?.moment != LocalZoneTests.utc(2026, 11, 27, 21) { await step() }
        #expect(await queue.waiting.isEmpty, "21:00 was skipped")
        await quiet.set(.off)
        while await timetable.next?.moment != LocalZoneTests.utc(2026, 11, 28, 20) { await step() }
        #expect(await queue.waiting.map(\.origin) == [.fixedTime(LocalZoneTests.utc(2026, 11, 27, 21))], "22:00 played")
    }

    /// A restart just after a time was queued does not queue it again: the state file's mark
    /// says it was dealt with.
    @Test func aRestartWithinTheGraceDoesNotPlayATimeTwice() async throws {
        let bell = try clip("bell", at: ["07:55"])
        let (restarted, queue) = make([bell], start: LocalZoneTests.utc(2026, 11, 27, 6, 56))
        await restarted.restore(handledUntil: LocalZoneTests.utc(2026, 11, 27, 6, 55))
        let running = Task { try await restarted.run() }
        defer { running.cancel() }
        await settled()
        #expect(await queue.waiting.isEmpty)
        #expect(await restarted.persistedHandledUntil >= LocalZoneTests.utc(2026, 11, 27, 6, 56))
        #expect(await restarted.next?.moment == LocalZoneTests.utc(2026, 11, 28, 6, 55))
    }

    /// Without any `at` times it does not wake once a minute, and a reload that brings one
    /// wakes it at once.
    @Test func withoutTimesItSleepsUntilAReloadBringsSome() async throws {
        let start = LocalZoneTests.utc(2026, 11, 27, 6, 50)
        let (timetable, queue) = make([try clip("tune", at: [])], start: start)
        let running = Task { try await timetable.run() }
        defer { running.cancel() }
        await settled()
        clock.advance(by: .seconds(3600))
        #expect(clock.now.offset == .seconds(3600))
        let session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: [try clip("bell", at: ["08:00"])])
        await timetable.schedule.replace(with: Schedule(session))
        await settled()
        #expect(await timetable.next?.moment == LocalZoneTests.utc(2026, 11, 28, 7))
        #expect(await queue.waiting.isEmpty, "07:50 + 1 h is 08:50; the bell's next time is tomorrow")
    }

    /// The wall clock set forward by hours (NTP after boot) skips what it jumped over, and
    /// set back it plays nothing twice.
    @Test func aClockSetForwardOrBackPlaysNothingLateAndNothingTwice() async throws {
        let start = LocalZoneTests.utc(2026, 11, 27, 6, 59, 30)
        let (timetable, queue) = make([try clip("chime", at: ["*:00"])], start: start)
        let running = Task { try await timetable.run() }
        defer { running.cancel() }
        await settled()
        while await queue.waiting.count < 1 { await step() }
        // From about 08:01 to 10:56: 09:00 and 10:00 are jumped over; 11:00 is still to come.
        jump.value = 3 * 3600 - 5 * 60
        await step()
        #expect(await queue.waiting.count == 1, "09:00 and 10:00 were jumped over")
        jump.value = 0
        for _ in 0..<5 { await step() }
        #expect(await queue.waiting.count == 1, "the clock set back plays nothing again")
    }

    /// On the night clocks go forward, a 02:30 time plays at 03:00 CEST; on the night they go
    /// back, once.
    @Test func daylightSavingNightsPlayATimeOnce() async throws {
        let (spring, springQueue) = make([try clip("night", at: ["02:30"])], start: LocalZoneTests.utc(2026, 3, 29, 0, 50))
        let running = Task { try await spring.run() }
        await settled()
        while await springQueue.waiting.isEmpty { await step() }
        #expect(await springQueue.waiting.first?.origin == .fixedTime(LocalZoneTests.utc(2026, 3, 29, 1)))
        running.cancel()

        let (autumn, autumnQueue) = make([try clip("night", at: ["02:30"])], start: LocalZoneTests.utc(2026, 10, 25, 0, 20))
        let other = Task { try await autumn.run() }
        defer { other.cancel() }
        await settled()
        while await autumnQueue.waiting.isEmpty { await step() }
        // Through the repeated hour and on to the next morning: still once.
        for _ in 0..<200 { await step() }
        #expect(await autumnQueue.waiting.count == 1)
        #expect(await autumnQueue.waiting.first?.origin == .fixedTime(LocalZoneTests.utc(2026, 10, 25, 0, 30)))
    }

    /// While an alert is on, a time that comes is held back by it: in the history as such,
    /// not queued, not missed, and not played after the alert.
    @Test func aTimeThatComesWhileAnAlertIsOnIsHeldBack() async throws {
        let start = LocalZoneTests.utc(2026, 11, 27, 6, 59)
        let (timetable, queue) = make([try clip("bell", at: ["08:00"])], start: start)
        let alarm = PlayableClip(id: "alarm", source: ClipSource(file: "alarm.wav", path: "/clips/alarm.wav"))
        await queue.startAlert(.init(settings: AlertSettings(name: "lockdown", sound: .clip("alarm")), sound: alarm, endClip: nil, by: "office", since: 0))
        let running = Task { try await timetable.run() }
        defer { running.cancel() }
        await settled()
        while await queue.history.isEmpty { await step() }
        let play = try #require(await queue.history.first)
        #expect(play.entry.clip.id == "bell")
        #expect(play.outcome == .heldBack(reason: "lockdown alert"))
        #expect(play.outcome.name == "held-back")
        #expect(await queue.waiting.isEmpty, "not queued for after the alert")
        #expect(await queue.missedCount == 0, "not missed")
    }
}
