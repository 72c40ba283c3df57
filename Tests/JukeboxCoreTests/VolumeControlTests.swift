import JukeboxTestSupport
import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// The volume by time of day, on a manual clock whose wall time starts at a chosen moment, in
/// Central European time (the EU rule written out, so days across both clock changes can be
/// walked through).
@Suite("Volume: by hand, by the session, by its schedule", .timeLimit(.minutes(1)))
struct VolumeControlTests {
    let clock = ManualClock()
    let player = Player(sink: FakeSink(), decoder: Fixtures.decoder([]), clock: ManualClock(), logger: .quiet)
    static let dayAndEvening = [VolumeStep(from: .clock(TimeOfDay("07:00")!), level: 0.8), VolumeStep(from: .clock(TimeOfDay("20:00")!), level: 0.4)]

    func make(start: Int64, steps: [VolumeStep] = Self.dayAndEvening, maxVolume: Double = 1) -> (VolumeControl, WallClock) {
        var session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: [])
        session.volumeSchedule = steps
        session.maxVolume = maxVolume
        let clock = clock
        let wallClock: WallClock = { Double(start + clock.now.offset.components.seconds) }
        return (VolumeControl(schedule: ScheduleBoard(session), player: player, events: EventBus(), time: TimeSource(clock: clock, wallClock: wallClock, zone: CentralEuropeanZone()), logger: .quiet), wallClock)
    }

    /// Advances to the next deadline (the schedule's look, or the ramp's next move) and waits
    /// until the schedule sleeps again.
    func step() async {
        clock.advanceToNextDeadline()
        await clock.waitForSleepers()
    }

    /// Before the day's first step, the evening's level of the day before is in force.
    @Test func theLastStepRunsOnPastMidnight() async {
        let (schedule, _) = make(start: LocalZoneTests.utc(2026, 11, 27, 2))
        let night = await schedule.inForce()
        #expect(night?.level == 0.4 && night?.since == LocalZoneTests.utc(2026, 11, 26, 19))
        let (morning, _) = make(start: LocalZoneTests.utc(2026, 11, 27, 6))
        #expect(await morning.inForce()?.level == 0.8)
    }

    /// At a step the volume moves in twenty even moves over five seconds: it never jumps.
    @Test func aStepRampsOverFiveSeconds() async throws {
        let (schedule, wallClock) = make(start: LocalZoneTests.utc(2026, 11, 27, 18, 59, 30))
        await schedule.start(saved: nil)
        #expect(await player.volume == 0.8)
        let running = Task { try await schedule.run() }
        defer { running.cancel() }
        await clock.waitForSleepers()
        while Int64(wallClock()) < LocalZoneTests.utc(2026, 11, 27, 19) { await step() }
        // The step came: the schedule's next look and the ramp's first move are both waiting.
        await clock.waitForSleepers(2)
        var heard: [Double] = []
        for move in 1...20 {
            clock.advance(by: .milliseconds(250))
            if move < 20 { await clock.waitForSleepers(2) } else { await schedule.rampFinished() }
            heard.append(await player.volume)
        }
        #expect(heard.count == 20, "\(heard)")
        #expect(zip([0.8] + heard, heard).allSatisfy { abs($0 - $1 - 0.02) < 1e-9 }, "\(heard)")
        #expect(Int64(wallClock()) == LocalZoneTests.utc(2026, 11, 27, 19, 0, 5), "over five seconds")
        #expect(await schedule.appliedSince == LocalZoneTests.utc(2026, 11, 27, 19))
    }

    /// A volume set by hand holds until the next step, which then applies.
    @Test func aVolumeSetByHandHoldsUntilTheNextStep() async throws {
        let (schedule, wallClock) = make(start: LocalZoneTests.utc(2026, 11, 27, 20))
        await schedule.start(saved: nil)
        #expect(await player.volume == 0.4)
        let running = Task { try await schedule.run() }
        defer { running.cancel() }
        await clock.waitForSleepers()
        await schedule.setByHand(0.9)
        while Int64(wallClock()) < LocalZoneTests.utc(2026, 11, 28, 5, 59) { await step() }
        #expect(await player.volume == 0.9, "06:59: still as set by hand")
        while Int64(wallClock()) < LocalZoneTests.utc(2026, 11, 28, 6, 0, 5) { await step() }
        await schedule.rampFinished()
        #expect(await player.volume == 0.8, "07:00: the morning's level")
    }

    /// After a restart, a volume saved after the step in force (set by hand) is kept; one saved
    /// before it (the daemon was down when the step came) gives way to the step's level.
    @Test func aRestartKeepsTheHandsVolumeUntilTheNextStep() async {
        let (schedule, _) = make(start: LocalZoneTests.utc(2026, 11, 27, 21))
        await schedule.start(saved: (volume: 0.9, stepSince: LocalZoneTests.utc(2026, 11, 27, 19)))
        #expect(await player.volume == 0.9)
        await schedule.start(saved: (volume: 0.9, stepSince: LocalZoneTests.utc(2026, 11, 27, 6)))
        #expect(await player.volume == 0.4, "the 20:00 step came while the daemon was down")
        await schedule.start(saved: (volume: 0.9, stepSince: nil))
        #expect(await player.volume == 0.4)
        // A level above maxVolume (lowered since) is held to it.
        let (capped, _) = make(start: LocalZoneTests.utc(2026, 11, 27, 12), maxVolume: 0.5)
        await capped.start(saved: nil)
        #expect(await player.volume == 0.5)
    }

    /// Two days across each clock change: the steps come at 07:00 and 20:00 on the local
    /// clock, whatever the offset.
    @Test(arguments: [
        // Spring: the clocks go from 02:00 to 03:00 on the 29th of March.
        (LocalZoneTests.utc(2026, 3, 28, 11), [LocalZoneTests.utc(2026, 3, 28, 19), LocalZoneTests.utc(2026, 3, 29, 5), LocalZoneTests.utc(2026, 3, 29, 18), LocalZoneTests.utc(2026, 3, 30, 5)]),
        // Autumn: from 03:00 back to 02:00 on the 25th of October.
        (LocalZoneTests.utc(2026, 10, 24, 10), [LocalZoneTests.utc(2026, 10, 24, 18), LocalZoneTests.utc(2026, 10, 25, 6), LocalZoneTests.utc(2026, 10, 25, 19), LocalZoneTests.utc(2026, 10, 26, 6)]),
    ])
    func stepsKeepToTheLocalClockAcrossClockChanges(start: Int64, expected: [Int64]) async throws {
        let (schedule, wallClock) = make(start: start)
        await schedule.start(saved: nil)
        let running = Task { try await schedule.run() }
        defer { running.cancel() }
        await clock.waitForSleepers()
        var applied: [Int64] = []
        while Int64(wallClock()) < start + 2 * 86_400 {
            await step()
            if let since = await schedule.appliedSince, since != applied.last, since > start { applied.append(since) }
        }
        #expect(applied == expected)
    }
}

/// The volume has one owner, which alone sets the player's level and alone says so.
@Suite("Volume: one owner, one event", .timeLimit(.minutes(1)))
struct VolumeOwnerTests {
    @Test func aLevelSetByHandIsHeldToMaxVolumeAndSaidOnce() async throws {
        let clock = ManualClock()
        let player = Player(sink: FakeSink(), decoder: Fixtures.decoder([]), clock: ManualClock(), logger: .quiet)
        var session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: [])
        session.maxVolume = 0.6
        let events = EventBus()
        let volume = VolumeControl(schedule: ScheduleBoard(session), player: player, events: events, time: TimeSource(clock: clock, zone: CentralEuropeanZone()), logger: .quiet)
        let subscription = events.subscribe()
        #expect(await volume.setByHand(0.9) == 0.6)
        #expect(await player.volume == 0.6)
        #expect(await volume.setByHand(0.3) == 0.3)
        var said: [JukeboxEvent] = []
        for await event in subscription { said.append(event); if said.count == 2 { break } }
        #expect(said == [.volume(60), .volume(30)])
        // A reload with a lower maxVolume brings the level down to it.
        var quieter = session
        quieter.maxVolume = 0.2
        await volume.schedule.replace(with: Schedule(quieter))
        #expect(await player.volume == 0.2)
    }
}
