@testable import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxTestSupport
import Logging
import Testing

/// Ramps that go wrong part-way, on the manual clock: a player whose connection is reset
/// mid-ramp is still jukeboxd's to put back from anywhere between the two levels, and a level
/// someone sets mid-ramp is theirs: the ramp stops there and nothing moves it after.
@Suite("Ducking: ramps that go wrong part-way", .timeLimit(.minutes(1)))
struct DuckRampTests {
    static let kitchen = DuckSettings.Player.mpd(.tcp(host: "kitchen", port: 6600), passwordFile: nil)
    static let name = "mpd kitchen:6600"
    let clock = ManualClock()
    let log = LogCollector()

    /// A ducker over the kitchen's player alone, lowering to a quarter over 1 s (20 steps)
    /// and raising over 1 s.
    func ducker(_ players: FakePlayers) async -> Ducker {
        var session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: [])
        session.duck = DuckSettings(level: 0.25, attack: .seconds(1), release: .seconds(1), mode: .lower, players: [Self.kitchen])
        let ducker = Ducker(
            schedule: ScheduleBoard(session), makeTarget: players.factory, events: EventBus(), time: TimeSource(clock: clock, wallClock: { 1_000 }),
            logger: Logger(label: "t") { _ in log })
        await ducker.setSaver { players.note("save") }
        return ducker
    }

    func entry() -> QueueEntry { QueueEntry(ticket: 1, clip: Fixtures.clip("bell"), origin: .scheduler) }

    /// Moves the clock from one sleeper's deadline to the next until `condition` holds.
    func drive(_ condition: @Sendable () async -> Bool) async {
        if !(await clock.advance(until: condition)) { Issue.record("never came") }
    }

    @Test func aPlayerWhoseConnectionIsResetMidRampIsPutBackFromWhereItWasLeft() async throws {
        let players = FakePlayers([Self.name: .init(volume: 80)])
        players.resetConnection(Self.name, atSet: 3)
        let ducker = await ducker(players)
        let starting = Task { await ducker.clipStarting(entry(), leadIn: .zero) }
        await drive { log.contains("did not answer (the connection was reset)") }
        await starting.value
        let left = try #require(players.volume(Self.name))
        #expect(left < 80 && left > 20, "left part-way down: \(left)")
        #expect(await ducker.records.first?.ramping == true, "still jukeboxd's, somewhere between")
        // The clip ends: the player, answering again, goes back up from where it was left.
        await ducker.clipEnded(anotherWaits: false)
        await drive { await ducker.records.isEmpty }
        #expect(players.volume(Self.name) == 80)
        #expect(!log.contains("was changed while lowered"), "\(log.lines)")
    }

    @Test(arguments: [true, false])
    func aLevelSetMidRampIsKept(lowering: Bool) async throws {
        let players = FakePlayers([Self.name: .init(volume: 80)])
        let ducker = await ducker(players)
        let starting = Task { await ducker.clipStarting(entry(), leadIn: .zero) }
        if lowering {
            // A few steps down, someone turns it up to a level no step sets.
            await drive { (players.volume(Self.name) ?? 80) < 60 }
            players.set(Self.name, volume: 95)
            await drive { await ducker.records.isEmpty }
            await starting.value
            #expect(log.contains("duck: mpd kitchen:6600 was set to 95 while jukeboxd was lowering it; it is left there"), "\(log.lines)")
            await ducker.clipEnded(anotherWaits: false)
        } else {
            await drive {
                let settled = await ducker.records.first?.ramping == nil
                return settled && players.volume(Self.name) == 20
            }
            await starting.value
            await ducker.clipEnded(anotherWaits: false)
            // A few steps up, someone turns it down to a level no step sets.
            await drive { (players.volume(Self.name) ?? 20) > 30 }
            players.set(Self.name, volume: 10)
            await drive { await ducker.records.isEmpty }
            #expect(log.contains("duck: mpd kitchen:6600 was set to 10 while jukeboxd was raising it; it is left there"), "\(log.lines)")
        }
        // Nothing moves it after: not the rest of the ramp, nor the raising after the clip.
        while clock.sleeperCount > 0 { clock.advanceToNextDeadline(); await Task.yield() }
        #expect(players.volume(Self.name) == (lowering ? 95 : 10))
        #expect(await ducker.records.isEmpty)
    }
}
