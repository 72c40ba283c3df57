@testable import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxTestSupport
import Logging
import Testing

/// The music bed's gain lowered by the one duck policy, on the manual clock: under every clip
/// (one that does not lower the other players too), to the bed's own level over its own attack,
/// in the policy's steps, and back over its release; held low between clips back to back; and
/// told to no one (the bed's state is in `status`).
@Suite("Ducking: the music bed's gain", .timeLimit(.minutes(1)))
struct BedDuckTests {
    static let bed = "music bed"
    let clock = ManualClock()
    let events = EventBus()

    /// A session with a bed at −12 dB (25 %), lowered over 200 ms (four steps) and raised over
    /// 500 ms, and the other players' duck over the kitchen's MPD.
    func session() -> Session {
        var session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: [])
        session.bed = BedSettings(pipe: "/run/bed", level: 0.25, attack: .milliseconds(200), release: .milliseconds(500))
        session.duck = DuckSettings(level: 0.5, attack: .zero, release: .zero, mode: .lower, players: [DuckRampTests.kitchen])
        return session
    }

    func ducker(_ lowers: Ducker.Lowers, _ players: FakePlayers, events: EventBus?) -> Ducker {
        Ducker(
            schedule: ScheduleBoard(session()), lowers: lowers, makeTarget: players.factory, events: events,
            time: TimeSource(clock: clock, wallClock: { 1_000 }), logger: .quiet)
    }

    func entry(ducks: Bool) -> QueueEntry {
        var clip = Fixtures.clip("bell")
        clip.ducks = ducks
        return QueueEntry(ticket: 1, clip: clip, origin: .scheduler)
    }

    func drive(_ condition: @Sendable () async -> Bool) async {
        if !(await clock.advance(until: condition)) { Issue.record("never came") }
    }

    @Test func aClipThatLowersNoPlayerStillLowersTheBedInStepsAndItComesBack() async throws {
        let beds = FakePlayers([Self.bed: .init(volume: 100)])
        let others = FakePlayers([DuckRampTests.name: .init(volume: 80)])
        let bed = ducker(.bed, beds, events: nil)
        let players = ducker(.players, others, events: events)
        let clip = entry(ducks: false)
        #expect(await players.duck(for: clip) == nil, "the clip lowers no other player")
        #expect(await bed.duck(for: clip) == .milliseconds(200), "the clip waits for the bed's attack")
        await drive { beds.volume(Self.bed) == 25 }
        // 100 → 25 in equal steps of decibels, one each 50 ms: 71, 50, 35, 25.
        let sets = beds.calls.filter { $0.hasPrefix("set") }
        #expect(sets.count == 4, "\(beds.calls)")
        #expect(others.volume(DuckRampTests.name) == 80)
        // Back to back: the next clip finds it low, and nothing moves.
        await bed.clipEnded(anotherWaits: true)
        #expect(await bed.duck(for: clip) == nil)
        await bed.clipEnded(anotherWaits: false)
        await drive { await bed.records.isEmpty }
        #expect(beds.volume(Self.bed) == 100)
        #expect(beds.calls.filter { $0.hasPrefix("set") }.count == 4 + 10, "up over 500 ms in ten steps: \(beds.calls)")
    }
}
