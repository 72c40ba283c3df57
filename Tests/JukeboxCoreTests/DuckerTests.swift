@testable import JukeboxCore
import Logging
import JukeboxCoreTestSupport
import JukeboxTestSupport
import Synchronization
import Testing

/// Players in the house, as the ducker reaches them: each with a volume, playing or not, and
/// perhaps away; every call and every save in one log, in order.
final class FakePlayers: Sendable {
    struct Player: Sendable {
        var volume: Int?
        var playing = true
        var away = false
    }

    let players: Mutex<[String: Player]>
    let log = Mutex<[String]>([])
    /// While not nil, each read waits here until `releaseReads()`: a player slow to answer.
    let heldReads = Mutex<[CheckedContinuation<Void, Never>]?>(nil)

    func holdReads() { heldReads.withLock { $0 = [] } }
    func releaseReads() {
        let waiting = heldReads.withLock { held in
            defer { held = nil }
            return held ?? []
        }
        for read in waiting { read.resume() }
    }
    var readsWaiting: Int { heldReads.withLock { $0?.count ?? 0 } }

    init(_ players: [String: Player]) { self.players = Mutex(players) }

    var calls: [String] { log.withLock { $0 } }
    func note(_ line: String) { log.withLock { $0.append(line) } }
    func volume(_ name: String) -> Int? { players.withLock { $0[name]?.volume } }
    func set(_ name: String, volume: Int) { players.withLock { $0[name]?.volume = volume } }
    func setAway(_ name: String, _ away: Bool) { players.withLock { $0[name]?.away = away } }
    /// Sets left before a player's connection is reset (the set fails; the next connection works).
    let setsBeforeReset = Mutex<[String: Int]>([:])
    func resetConnection(_ name: String, atSet count: Int) { setsBeforeReset.withLock { $0[name] = count } }

    struct Target: DuckTarget {
        let name: String
        let players: FakePlayers

        func player() throws -> Player {
            guard let player = players.players.withLock({ $0[name] }), !player.away else { throw Away() }
            return player
        }

        func read() async throws -> DuckTargetState {
            await withCheckedContinuation { (answer: CheckedContinuation<Void, Never>) in
                let held = players.heldReads.withLock { held in
                    guard held != nil else { return false }
                    held?.append(answer)
                    return true
                }
                if !held { answer.resume() }
            }
            let player = try player()
            players.note("read \(name)")
            return DuckTargetState(volume: player.volume, playing: player.playing)
        }

        func setVolume(_ percent: Int) async throws {
            _ = try player()
            let reset = players.setsBeforeReset.withLock { left -> Bool in
                guard let count = left[name] else { return false }
                if count <= 1 { left[name] = nil; return true }
                left[name] = count - 1
                return false
            }
            if reset { throw ConnectionReset() }
            players.note("set \(name) \(percent)")
            players.set(name, volume: percent)
        }

        func setPaused(_ paused: Bool) async throws {
            _ = try player()
            players.note("\(paused ? "pause" : "play") \(name)")
            players.players.withLock { $0[name]?.playing = !paused }
        }
    }

    struct Away: Error, CustomStringConvertible { var description: String { "refused the connection: is it running?" } }
    struct ConnectionReset: Error, CustomStringConvertible { var description: String { "the connection was reset" } }

    var factory: DuckTargetFactory { { [self] player in Target(name: player.description, players: self) } }
}

@Suite("Other players ducked while a clip sounds", .timeLimit(.minutes(1)))
struct DuckerTests {
    let events = EventBus()
    static let kitchen = DuckSettings.Player.mpd(.tcp(host: "kitchen", port: 6600), passwordFile: nil)
    static let hall = DuckSettings.Player.mpd(.unix(path: "/run/mpd/socket"), passwordFile: nil)

    /// A ducker over `players`, with no ramps (attack and release 0: a ramp is one step), that
    /// notes each save in the players' log.
    func ducker(_ players: FakePlayers, mode: DuckSettings.Mode = .lower, clips: [Clip] = []) async -> Ducker {
        var session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: clips)
        session.duck = DuckSettings(level: 0.25, attack: .zero, release: .zero, mode: mode, players: [Self.kitchen, Self.hall])
        let ducker = Ducker(schedule: ScheduleBoard(session), makeTarget: players.factory, events: events, time: TimeSource(wallClock: { 1_000 }), logger: .quiet)
        await ducker.setSaver { [ducker] in players.note("save \(await ducker.records.map { "\($0.player)=\($0.volume ?? -1)" }.joined(separator: ","))") }
        return ducker
    }

    func entry(_ id: String) -> QueueEntry { QueueEntry(ticket: 1, clip: Fixtures.clip(id), origin: .scheduler) }

    /// Waits until the ducker has nothing lowered, or until `players` reach the levels given.
    /// A test whose condition never comes fails at its time limit, which cancels it, rather
    /// than spin on.
    func settle(_ ducker: Ducker, _ condition: @Sendable () async -> Bool) async {
        while !(await condition()) {
            if Task.isCancelled {
                Issue.record("the ducker never settled")
                return
            }
            await Task.yield()
        }
    }

    @Test func theLevelsToGoBackToAreOnDiskBeforeAnyPlayerIsLoweredAndBothComeBack() async throws {
        let players = FakePlayers(["mpd kitchen:6600": .init(volume: 80), "mpd /run/mpd/socket": .init(volume: 40)])
        let ducker = await ducker(players)
        let subscription = events.subscribe()
        await ducker.clipStarting(entry("bell"), leadIn: .zero)
        await settle(ducker) { players.volume("mpd kitchen:6600") == 20 && players.volume("mpd /run/mpd/socket") == 10 }
        let calls = players.calls
        let save = calls.firstIndex { $0.hasPrefix("save") } ?? .max
        let firstSet = calls.firstIndex { $0.hasPrefix("set") } ?? -1
        #expect(save < firstSet, "saved before lowering: \(calls)")
        #expect(calls[save] == "save mpd kitchen:6600=80,mpd /run/mpd/socket=40" || calls[save] == "save mpd /run/mpd/socket=40,mpd kitchen:6600=80", "\(calls)")
        #expect(Set(await ducker.ducked) == ["mpd kitchen:6600", "mpd /run/mpd/socket"])
        await ducker.clipEnded(anotherWaits: false)
        // The records go, then the state is saved without them.
        await settle(ducker) { await ducker.ducked.isEmpty && players.calls.last?.hasPrefix("save") == true }
        #expect(players.volume("mpd kitchen:6600") == 80 && players.volume("mpd /run/mpd/socket") == 40)
        #expect(players.calls.last == "save ", "the records are gone from the state once both are back: \(players.calls)")
        var seen: [String] = []
        for await event in subscription {
            switch event {
            case .ducked(let names): seen.append("ducked \(names.count)")
            case .restored(let names): seen.append("restored \(names.count)")
            default: continue
            }
            if seen.count == 2 { break }
        }
        #expect(seen == ["ducked 2", "restored 2"])
    }

    @Test func clipsBackToBackKeepTheMusicLowAndAChangeMadeMeanwhileIsKept() async throws {
        let players = FakePlayers(["mpd kitchen:6600": .init(volume: 80), "mpd /run/mpd/socket": .init(volume: 40)])
        let ducker = await ducker(players)
        await ducker.clipStarting(entry("a"), leadIn: .zero)
        await settle(ducker) { players.volume("mpd kitchen:6600") == 20 && players.volume("mpd /run/mpd/socket") == 10 }
        await ducker.clipEnded(anotherWaits: true)
        let before = players.calls
        await ducker.clipStarting(entry("b"), leadIn: .zero)
        #expect(players.calls == before, "nothing asked of the players for the second clip")
        // Someone turns the hall's player up while it is lowered: it is left as they set it.
        players.set("mpd /run/mpd/socket", volume: 70)
        await ducker.clipEnded(anotherWaits: false)
        await settle(ducker) { await ducker.ducked.isEmpty }
        #expect(players.volume("mpd kitchen:6600") == 80)
        #expect(players.volume("mpd /run/mpd/socket") == 70)
        #expect(!players.calls.contains("set mpd /run/mpd/socket 40"))
    }

    @Test func aPlayerThatIsAwayIsSkippedAndTheOtherIsLowered() async throws {
        let players = FakePlayers(["mpd kitchen:6600": .init(volume: 80), "mpd /run/mpd/socket": .init(volume: 40, away: true)])
        let ducker = await ducker(players)
        await ducker.clipStarting(entry("a"), leadIn: .zero)
        await settle(ducker) { players.volume("mpd kitchen:6600") == 20 }
        #expect(await ducker.ducked == ["mpd kitchen:6600"])
        await ducker.clipEnded(anotherWaits: false)
        await settle(ducker) { await ducker.ducked.isEmpty }
        // Tried again only after a while: the next clip does not wait on it.
        players.setAway("mpd /run/mpd/socket", false)
        await ducker.clipStarting(entry("b"), leadIn: .zero)
        #expect(!players.calls.contains("read mpd /run/mpd/socket"), "\(players.calls)")
    }

    @Test func aClipThatSaysDuckFalseLowersNothing() async throws {
        var chime = Clip(id: "chime", source: ClipSource(file: "chime.wav", path: "/clips/chime.wav"))
        chime.ducks = false
        let players = FakePlayers(["mpd kitchen:6600": .init(volume: 80), "mpd /run/mpd/socket": .init(volume: 40)])
        let ducker = await ducker(players, clips: [chime])
        await ducker.clipStarting(QueueEntry(ticket: 1, clip: PlayableClip(chime), origin: .scheduler), leadIn: .zero)
        await ducker.clipEnded(anotherWaits: false)
        #expect(players.calls.isEmpty)
        await ducker.clipStarting(entry("other"), leadIn: .zero)
        await settle(ducker) { players.volume("mpd kitchen:6600") == 20 }
    }

    /// Whether an entry ducks is fixed when it is queued: a reload since (here, a session that
    /// now says `"duck": false`) does not change an entry already waiting, either way.
    @Test func whetherAClipDucksIsWhatTheSessionSaidWhenItWasQueued() async throws {
        var chime = Clip(id: "chime", source: ClipSource(file: "chime.wav", path: "/clips/chime.wav"))
        chime.ducks = false
        let players = FakePlayers(["mpd kitchen:6600": .init(volume: 80), "mpd /run/mpd/socket": .init(volume: 40)])
        let ducker = await ducker(players, clips: [chime])
        let queuedWhenItDucked = QueueEntry(ticket: 1, clip: PlayableClip(id: "chime", source: chime.source, ducks: true), origin: .scheduler)
        await ducker.clipStarting(queuedWhenItDucked, leadIn: .zero)
        await settle(ducker) { players.volume("mpd kitchen:6600") == 20 }
        // And kept through the state file.
        let saved = PersistedState.Entry(QueueEntry(ticket: 2, clip: PlayableClip(chime), origin: .scheduler))
        #expect(saved.clip.duck == false)
        #expect(saved.queueEntry.clip.ducks == false)
        #expect(PersistedState.Entry(queuedWhenItDucked).clip.duck == nil)
    }

    @Test func pauseModePausesWhatPlaysAndPlaysItAgain() async throws {
        let players = FakePlayers(["mpd kitchen:6600": .init(volume: 80), "mpd /run/mpd/socket": .init(volume: 40, playing: false)])
        let ducker = await ducker(players, mode: .pause)
        await ducker.clipStarting(entry("a"), leadIn: .zero)
        await settle(ducker) { players.calls.contains("pause mpd kitchen:6600") }
        #expect(await ducker.ducked == ["mpd kitchen:6600"], "a player that was not playing is left alone")
        await ducker.clipEnded(anotherWaits: false)
        await settle(ducker) { await ducker.ducked.isEmpty }
        #expect(players.calls.contains("play mpd kitchen:6600"))
        #expect(!players.calls.contains { $0.hasSuffix("/run/mpd/socket") && !$0.hasPrefix("read") })
    }

    /// After a crash the state file's records are put back: a player still at the level
    /// jukeboxd set goes back up; one someone changed since is left; one that is away is tried
    /// again until it answers.
    @Test func aRestartPutsBackWhatTheStateFileListsIfStillOurs() async throws {
        let players = FakePlayers([
            "mpd kitchen:6600": .init(volume: 20), "mpd /run/mpd/socket": .init(volume: 90),
        ])
        let ducker = await ducker(players)
        await ducker.restore(saved: [
            DuckRecord(Self.kitchen, mode: .lower, volume: 80, lowered: 20), DuckRecord(Self.hall, mode: .lower, volume: 40, lowered: 10),
        ])
        await settle(ducker) { await ducker.ducked.isEmpty }
        #expect(players.volume("mpd kitchen:6600") == 80)
        #expect(players.volume("mpd /run/mpd/socket") == 90, "changed by someone since: kept")
    }

    /// With no player named, the section still says when a clip that ducks sounds, for Home
    /// Assistant's Ducking sensor (and its automations' own players).
    @Test func withNoPlayerDuckingStillSaysWhenAClipSounds() async throws {
        var session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: [])
        session.duck = DuckSettings(attack: .zero, release: .zero, players: [])
        let ducker = Ducker(schedule: ScheduleBoard(session), makeTarget: nil, events: events, time: TimeSource(wallClock: { 1_000 }), logger: .quiet)
        let subscription = events.subscribe()
        #expect(await !ducker.isDucking)
        await ducker.clipStarting(entry("a"), leadIn: .zero)
        #expect(await ducker.isDucking)
        await ducker.clipEnded(anotherWaits: false)
        #expect(await !ducker.isDucking)
        var seen: [JukeboxEvent] = []
        for await event in subscription {
            seen.append(event)
            if seen.count == 2 { break }
        }
        #expect(seen == [.ducked([]), .restored([])])
    }

    /// A gap shorter than `release` is not a gap: with the next clip due within it, the music
    /// stays low for it; when it does not come after all, the music comes up.
    @Test func aClipDueWithinTheReleaseKeepsTheMusicLow() async throws {
        let players = FakePlayers(["mpd kitchen:6600": .init(volume: 80), "mpd /run/mpd/socket": .init(volume: 40)])
        let clock = ManualClock()
        var session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: [])
        session.duck = DuckSettings(level: 0.25, attack: .zero, release: .seconds(1), players: [Self.kitchen])
        let ducker = Ducker(schedule: ScheduleBoard(session), makeTarget: players.factory, events: events, time: TimeSource(clock: clock, wallClock: { 1_000 }), logger: .quiet)
        await ducker.setSaver {}
        // The next clip is due half a second after this one ends.
        await ducker.setNextStart { 1_000.5 }
        await ducker.clipStarting(entry("a"), leadIn: .zero)
        await settle(ducker) { players.volume("mpd kitchen:6600") == 20 }
        await ducker.clipEnded(anotherWaits: false)
        await clock.waitForSleepers()
        #expect(await ducker.isDucking, "held low for the clip due")
        let before = players.calls
        await ducker.clipStarting(entry("b"), leadIn: .zero)
        #expect(players.calls == before && players.volume("mpd kitchen:6600") == 20, "still low: nothing asked of the player")
        // This time nothing comes: after the gap and the release, the music comes up.
        await ducker.clipEnded(anotherWaits: false)
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(1400))
        #expect(await ducker.isDucking)
        clock.advance(by: .milliseconds(200))
        while await !ducker.ducked.isEmpty {
            clock.advanceToNextDeadline()
            await Task.yield()
        }
        #expect(players.volume("mpd kitchen:6600") == 80)
    }

    /// Paused, nothing sounds: the music comes back up; resumed mid-clip, it goes down again.
    @Test func pausingBringsTheMusicBackAndResumingLowersItAgain() async throws {
        let players = FakePlayers(["mpd kitchen:6600": .init(volume: 80), "mpd /run/mpd/socket": .init(volume: 40)])
        let ducker = await ducker(players)
        await ducker.clipStarting(entry("a"), leadIn: .zero)
        await settle(ducker) { players.volume("mpd kitchen:6600") == 20 }
        await ducker.paused()
        await settle(ducker) { await ducker.ducked.isEmpty }
        #expect(players.volume("mpd kitchen:6600") == 80 && players.volume("mpd /run/mpd/socket") == 40)
        #expect(await !ducker.isDucking)
        await ducker.resumed(entry("a"))
        await settle(ducker) { players.volume("mpd kitchen:6600") == 20 && players.volume("mpd /run/mpd/socket") == 10 }
        #expect(await ducker.isDucking)
    }

    /// A pause that came while the players' levels were still being read used to leave them
    /// lowered with nothing sounding: the lowering went on after the pause had found nothing
    /// to raise. It now lowers nothing; and a resume meanwhile lowers them once, not twice.
    @Test func aPauseWhileTheLevelsAreReadLeavesNothingLow() async throws {
        let players = FakePlayers(["mpd kitchen:6600": .init(volume: 80), "mpd /run/mpd/socket": .init(volume: 40)])
        let ducker = await ducker(players)
        players.holdReads()
        let starting = Task { await ducker.clipStarting(entry("a"), leadIn: .zero) }
        await settle(ducker) { players.readsWaiting == 2 }
        await ducker.paused()
        players.releaseReads()
        await starting.value
        #expect(await ducker.ducked.isEmpty)
        #expect(await !ducker.isDucking)
        #expect(!players.calls.contains { $0.hasPrefix("set") }, "\(players.calls)")
        #expect(players.volume("mpd kitchen:6600") == 80 && players.volume("mpd /run/mpd/socket") == 40)
        // Paused during the reading, then resumed while it still waits: lowered once.
        players.holdReads()
        let again = Task { await ducker.clipStarting(entry("a"), leadIn: .zero) }
        await settle(ducker) { players.readsWaiting == 2 }
        await ducker.paused()
        let resumed = Task { await ducker.resumed(entry("a")) }
        await settle(ducker) { players.readsWaiting == 4 }
        players.releaseReads()
        await again.value
        await resumed.value
        await settle(ducker) { players.volume("mpd kitchen:6600") == 20 && players.volume("mpd /run/mpd/socket") == 10 }
        #expect(await ducker.isDucking)
        #expect(players.calls.filter { $0 == "set mpd kitchen:6600 20" }.count == 1, "\(players.calls)")
        #expect(Set(await ducker.ducked) == ["mpd kitchen:6600", "mpd /run/mpd/socket"])
        await ducker.clipEnded(anotherWaits: false)
        await settle(ducker) { await ducker.ducked.isEmpty }
        #expect(players.volume("mpd kitchen:6600") == 80 && players.volume("mpd /run/mpd/socket") == 40)
    }

    /// A ramp moves in equal steps of decibels, and ends where it was going.
    @Test func rampsStepInDecibels() {
        let down = (1...6).map { Ducker.level(from: 100, to: 13, at: Double($0) / 6) }
        #expect(down == [71, 51, 36, 26, 18, 13])
        #expect((1...4).map { Ducker.level(from: 5, to: 80, at: Double($0) / 4) } == [10, 20, 40, 80])
        #expect(Ducker.level(from: 40, to: 0, at: 1) == 0, "down to nothing, exactly")
        #expect(Ducker.level(from: 0, to: 30, at: 0.5) == 5)
    }

    @Test func recordsRoundTripThroughTheStateFile() async throws {
        let folder = try TemporaryDirectory()
        let file = StateFile(path: folder.file("state.json"))
        var state = PersistedState(nextTicket: 3)
        state.ducked = [
            DuckRecord(Self.kitchen, mode: .lower, volume: 80, lowered: 20, ramping: true),
            DuckRecord(.snapclient(server: .tcp(host: "snap", port: 1705), client: "den"), mode: .pause, volume: nil, lowered: nil),
        ]
        _ = try await file.save(state)
        #expect(await file.load() == .loaded(state))
        let record = DuckRecord(.snapclient(server: .tcp(host: "::1", port: 1705), client: "kitchen"), mode: .lower, volume: 55, lowered: 7)
        #expect(record.target == .snapclient(server: .tcp(host: "::1", port: 1705), client: "kitchen"))
        #expect(record.player == "snapclient kitchen on [::1]:1705")
        let mpd = DuckRecord(.mpd(.unix(path: "/run/mpd/socket"), passwordFile: "/etc/jukeboxd/mpd.pass"), mode: .pause, volume: nil, lowered: nil)
        #expect(mpd.target == .mpd(.unix(path: "/run/mpd/socket"), passwordFile: "/etc/jukeboxd/mpd.pass"))
        #expect(mpd.isOurs(DuckTargetState(volume: 50, playing: false)) && !mpd.isOurs(DuckTargetState(volume: 50, playing: true)))
        #expect(record.isOurs(DuckTargetState(volume: 7, playing: true)))
        #expect(!record.isOurs(DuckTargetState(volume: 30, playing: true)), "someone's level, even between the two")
        #expect(!record.isOurs(DuckTargetState(volume: 55, playing: true)))
        var moving = record
        moving.ramping = true
        #expect(moving.isOurs(DuckTargetState(volume: 30, playing: true)), "left there by a ramp that a crash cut short")
        #expect(!moving.isOurs(DuckTargetState(volume: 56, playing: true)))
    }

    /// A state file edited by hand: levels out of range are held to 0–100 (not a number: none),
    /// and a record naming no player is dropped with a warning; the rest of the state stays.
    @Test func aHandEditedRecordIsHeldToItsRangeAndNeverCostsTheState() async throws {
        let folder = try TemporaryDirectory()
        let file = StateFile(path: folder.file("state.json"))
        _ = try await file.save(PersistedState(nextTicket: 7))
        var text = String(decoding: try folder.read("state.json"), as: UTF8.self)
        let records = #""ducked":[{"player":"mpd kitchen:6600","kind":"mpd","address":"kitchen:6600","mode":"lower","volume":1e30,"lowered":-5},"#
            + #"{"player":"mpd hall:6600","kind":"mpd","address":"hall:6600","mode":"lower","volume":999,"lowered":"loud"},"#
            + #"{"player":"mystery","address":"x:1","mode":"lower","volume":50,"lowered":10}],"#
        text = text.replacingOccurrences(of: #""history""#, with: records + #""history""#)
        try folder.write("state.json", text: text)
        guard case .loaded(let state) = await file.load() else {
            Issue.record("the state was set aside")
            return
        }
        #expect(state.nextTicket == 7)
        let ducked = try #require(state.ducked)
        #expect(ducked.map(\.volume) == [100, 100, 50])
        #expect(ducked.map(\.lowered) == [0, nil, 10])
        let log = LogCollector()
        let players = FakePlayers(["mpd kitchen:6600": .init(volume: 0), "mpd hall:6600": .init(volume: 30)])
        var session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: [])
        session.duck = DuckSettings(level: 0.25, attack: .zero, release: .zero, mode: .lower, players: [Self.kitchen])
        let ducker = Ducker(schedule: ScheduleBoard(session), makeTarget: players.factory, events: events, time: TimeSource(wallClock: { 1_000 }), logger: Logger(label: "t") { _ in log })
        await ducker.restore(saved: ducked)
        #expect(log.contains("duck: the state file's record of a lowered player (mystery) names no player jukeboxd can reach; it is dropped"), "\(log.lines)")
        // The kitchen is at the held level it was lowered to (0): back at 100, not 1e30.
        #expect(players.volume("mpd kitchen:6600") == 100)
    }
}
