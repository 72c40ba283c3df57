import Glibc
import JukeboxCore
import JukeboxTestSupport
import Testing
import JukeboxCoreTestSupport

@Suite("Durable state", .timeLimit(.minutes(1)))
struct StateTests {
    let folder: TemporaryDirectory
    init() throws { folder = try TemporaryDirectory() }

    func entry(_ ticket: UInt64, _ id: String, client: String? = nil) -> PersistedState.Entry {
        PersistedState.Entry(
            ticket: ticket, clip: .init(id: id, file: "\(id).wav", path: "/clips/\(id).wav", title: id, gain: -2), cue: nil, client: client)
    }

    @Test func roundTripsThroughTheFile() async throws {
        let file = StateFile(path: folder.file("deep/er/state.json"))
        #expect(await file.load() == .missing)
        var state = PersistedState(
            nextTicket: 9, waiting: [entry(7, "a", client: "cli"), entry(8, "b")],
            bag: .init(remaining: ["c", "a"], lastPick: "b", cycle: 4), paused: true, volume: 0.4,
            stats: ["a": ClipStats(timesPlayed: 3, lastPlayed: 1_000)], history: [])
        state.plans = ["2026-12-03": DayPlans.ByHand(plan: "none", by: "pi", at: 1_800_000_000), "2026-12-01": DayPlans.ByHand(plan: "late-start")]
        state.alert = .init(name: "lockdown", client: "phone", via: "web", since: 1_800_000_000.5)
        var end = entry(10, "all-clear")
        end.alert = "lockdown"
        end.volume = 0.9
        state.waiting.insert(end, at: 0)
        try await file.save(state)
        #expect(await file.load() == .loaded(state))
        #expect(!FilePath.isRegularFile(folder.file("deep/er/.state.json.tmp")), "the temporary file was renamed over")
        // An alert's end clip plays at the alert's level, above maxVolume, after a restart too.
        let restored = state.waiting[0].queueEntry
        #expect(restored.alert == "lockdown" && restored.playing == .alert(level: 0.9))
    }

    /// A clip queued at its `at` time keeps that moment through a restart, and comes back as
    /// queued by the timetable, not by the random scheduler.
    @Test func aFixedTimeEntryKeepsItsMoment() async throws {
        let file = StateFile(path: folder.file("state.json"))
        var fixed = entry(5, "bell")
        fixed.at = 1_795_760_100
        let state = PersistedState(
            nextTicket: 7, waiting: [fixed, entry(6, "a", client: "cli")], paused: false, volume: 1, stats: [:], history: [],
            timetableUntil: 1_795_760_160)
        try await file.save(state)
        guard case .loaded(let loaded) = await file.load() else {
            Issue.record("the state did not load")
            return
        }
        #expect(loaded == state)
        #expect(loaded.waiting.map(\.queueEntry.origin) == [.fixedTime(1_795_760_100), .client("cli")])
    }

    @Test func corruptFileIsMovedAsideNotOverwritten() async throws {
        let path = try folder.write("state.json", text: "{ this is not state")
        let result = await StateFile(path: path).load(now: 1_234)
        #expect(result == .corrupt(movedTo: path + ".corrupt-1234", reason: "not a valid state file"))
        #expect(try folder.read("state.json.corrupt-1234") == Array("{ this is not state".utf8))
        #expect(!FilePath.isRegularFile(path))
    }

    /// The rename that moves a corrupt file aside used to go unchecked, so the next save
    /// overwrote the file it was meant to keep. When it fails, nothing is saved at all.
    @Test func aCorruptFileThatCannotBeMovedAsideIsNeverOverwritten() async throws {
        let path = try folder.write("state.json", text: "{ this is not state")
        // Something already stands at the name it would be moved to: a folder with a file in it.
        mkdir(path + ".corrupt-1234", 0o755)
        _ = try folder.write("state.json.corrupt-1234/keep", text: "x")
        let stateFile = StateFile(path: path)
        guard case .unusable(let reason) = await stateFile.load(now: 1_234) else {
            Issue.record("expected .unusable")
            return
        }
        #expect(reason.hasPrefix("not a valid state file; moving it to \(path).corrupt-1234 failed: "), "\(reason)")
        let session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: [
            Clip(id: "a", source: ClipSource(file: "a.wav", path: "/clips/a.wav")),
        ])
        let core = Jukebox.test(
            ClipCatalog(session: session), decoder: Fixtures.decoder([("a", 1, 10)]), stateFile: stateFile, time: TimeSource(clock: ManualClock(), wallClock: { 1_234 }))
        await core.restoreState()
        let accepted = try await core.enqueue(["a"], cue: false, client: "test")
        await #expect(throws: JukeboxError.stateNotSaved(reason: "not saving the state file \(path): \(path) could not be read or moved aside (\(reason))")) {
            try await core.waitUntilDurable(accepted)
        }
        #expect(try folder.read("state.json") == Array("{ this is not state".utf8), "the file is as it was")
    }

    @Test func concurrentSavesShareWritesAndEachSeesItsChange() async throws {
        let counter = Counter()
        let file = StateFile(path: folder.file("state.json"))
        let writer = StateWriter(file: file) { PersistedState(nextTicket: UInt64(await counter.value)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    let mine = await counter.increment()
                    try await writer.save()
                    // What is on disk now includes this change.
                    guard case .loaded(let state) = await file.load() else { Issue.record("no state"); return }
                    #expect(state.nextTicket >= UInt64(mine))
                }
            }
            try await group.waitForAll()
        }
        #expect(await writer.writes < 200, "writes are shared across requests that arrive together")
        guard case .loaded(let final) = await file.load() else { Issue.record("no state"); return }
        #expect(final.nextTicket == 200)
    }

    @Test func aWriteCoversEveryChangeMarkedBeforeIt() async throws {
        let writer = StateWriter(file: StateFile(path: folder.file("state.json"))) { PersistedState() }
        let first = await writer.markChange()
        let second = await writer.markChange()
        try await writer.save(through: second)
        #expect(await writer.writes == 1)
        try await writer.save(through: first)
        #expect(await writer.writes == 1, "already durable: no second write")
        try await writer.save(through: await writer.markChange())
        #expect(await writer.writes == 2)
    }

    /// A clip queued at its fixed time that had not started when the daemon stopped comes back
    /// only if its time is within `atGrace`; an older one is not played late.
    @Test func aFixedTimeQueuedBeforeAStopIsNotPlayedLateAfterIt() async throws {
        let session = Session(name: "t", sourcePath: "/s.json", clipsDirectory: "/clips", clips: ["bell", "a"].map {
            Clip(id: $0, source: ClipSource(file: "\($0).wav", path: "/clips/\($0).wav"))
        })
        let now = 1_800_000_000.0
        var stale = entry(3, "bell"), fresh = entry(4, "bell")
        stale.at = Int64(now) - 600
        fresh.at = Int64(now) - 60
        let stateFile = StateFile(path: folder.file("state.json"))
        try await stateFile.save(PersistedState(nextTicket: 6, waiting: [stale, fresh, entry(5, "a", client: "cli")]))
        let core = Jukebox.test(
            ClipCatalog(session: session), stateFile: stateFile, time: TimeSource(clock: ManualClock(), wallClock: { now }))
        await core.restoreState()
        let restored = await core.snapshot()
        #expect(restored.queue.waiting.map(\.ticket) == [4, 5])
        #expect(restored.queue.waiting.first?.origin == .fixedTime(Int64(now) - 60))
    }

    /// `maxVolume` holds every front end's volume, and a louder one saved before it was set.
    @Test func maxVolumeCapsEveryVolumeSet() async throws {
        var session = Session(name: "t", sourcePath: "/s.json", clipsDirectory: "/clips", volume: 0.5, clips: [
            Clip(id: "a", source: ClipSource(file: "a.wav", path: "/clips/a.wav")),
        ])
        session.maxVolume = 0.6
        let capped = session
        let stateFile = StateFile(path: folder.file("state.json"))
        try await stateFile.save(PersistedState(volume: 0.9))
        let core = Jukebox.test(
            ClipCatalog(session: capped), stateFile: stateFile, time: TimeSource(clock: ManualClock()))
        await core.restoreState()
        #expect(await core.snapshot().volume == 60, "the saved 90 is held to the cap")
        #expect(try await core.setVolume(100).value == 60)
        #expect(try await core.setVolume(40).value == 40)
        #expect(await core.snapshot().volume == 40)
    }

    @Test func queueAndBagComeBackInOrderWithTheirTickets() async throws {
        let session = Session(name: "t", sourcePath: "/s.json", clipsDirectory: "/clips", clips: ["a", "b", "c"].map {
            Clip(id: $0, source: ClipSource(file: "\($0).wav", path: "/clips/\($0).wav"))
        })
        let stateFile = StateFile(path: folder.file("state.json"))
        try await stateFile.save(PersistedState(
            nextTicket: 12, waiting: [entry(10, "b"), entry(11, "a", client: "cli")], bag: .init(remaining: ["c"], lastPick: "a", cycle: 2),
            paused: true, volume: 0.5))
        let core = Jukebox.test(
            ClipCatalog(session: session), stateFile: stateFile, time: TimeSource(clock: ManualClock()))
        await core.restoreState()
        let restored = await core.snapshot()
        #expect(restored.queue.waiting.map(\.ticket) == [10, 11])
        #expect(restored.queue.waiting.last?.origin == .client("cli"))
        #expect(restored.queue.paused)
        #expect(restored.player.volume == 0.5)
        // The bag continues its cycle: "c" is the only clip left in it.
        let picked = await core.pick()
        #expect(picked.value?.clip.id == "c")
        #expect(picked.value?.ticket == 12, "tickets go on from the saved one")
        try await core.waitUntilDurable(picked)
        guard case .loaded(let again) = await stateFile.load() else { Issue.record("no state saved"); return }
        #expect(again.waiting.map(\.ticket) == [10, 11, 12])
        #expect(again.bag == .init(remaining: [], lastPick: "c", cycle: 2))
    }
}

actor Counter {
    var value = 0
    func increment() -> Int {
        value += 1
        return value
    }
}

extension StateTests {
    /// The state is written a piece at a time, not built as one tree; what it writes must read
    /// back through `JSONDecoder` exactly, whatever the strings hold.
    @Test func streamedStateReadsBackExactly() async throws {
        let odd = "quote \" backslash \\ newline \n tab \t bell \u{07} nul \u{00} é 🎵 /slash"
        let clip = PersistedState.Clip(id: odd, file: "f \"1\".wav", path: "/c/\(odd).wav", title: odd, gain: -2.5, within: "/c")
        var waiting: [PersistedState.Entry] = []
        for ticket in 1...3000 {
            let cue: PersistedState.Clip? = ticket % 2 == 0 ? clip : nil
            let client: String? = ticket % 3 == 0 ? odd : nil
            // Some queued at a fixed time, some held until quiet ends (those follow the rest).
            let at: Int64? = ticket % 5 == 0 && client == nil ? 1_800_000_000 + Int64(ticket) : nil
            waiting.append(PersistedState.Entry(ticket: UInt64(ticket), clip: clip, cue: cue, client: client, at: at, afterQuiet: ticket > 2990 ? true : nil))
        }
        let stats: [String: ClipStats] = [odd: ClipStats(timesPlayed: 3, lastPlayed: 1_732_288_888.123_456), "b": ClipStats()]
        let history: [PersistedState.Play] = [.init(entry: entry(5, "a"), startedAt: 12.5, outcome: "ended-early", reason: odd)]
        let bag = PersistedState.Bag(remaining: [odd, "b"], lastPick: nil, cycle: 7)
        let state = PersistedState(
            nextTicket: 18_446_744_073_709_551_000, waiting: waiting, bag: bag, paused: true, volume: 0.1 + 0.2,
            stats: stats, history: history, started: .init(ticket: 2, count: 1), timetableUntil: 1_800_000_123,
            quiet: .init(quiet: true, until: 1_800_003_600))
        let file = StateFile(path: folder.file("state.json"))
        let size = try await file.save(state)
        #expect(size > StateEncoderChunk.size, "bigger than one buffer, so it was written in pieces")
        #expect(await file.load() == .loaded(state))
        #expect(try folder.read("state.json").count == size)
    }
}

enum StateEncoderChunk {
    static let size = 65_536
}

extension StateTests {
    /// An announcement is saved by its text, not by a file: it survives a restart, and its
    /// audio is made again if the cache no longer has it. A saved text that is not valid
    /// (edited by hand) goes to the history as failed instead.
    @Test func announcementsSurviveARestartByTheirText() async throws {
        let session = Session(name: "t", sourcePath: "/s.json", clipsDirectory: "/clips", clips: [
            Clip(id: "a", source: ClipSource(file: "a.wav", path: "/clips/a.wav")),
        ])
        let stateFile = StateFile(path: folder.file("state.json"))
        var spoken = PersistedState.Entry(ticket: 4, clip: .init(.spoken("Dinner is ready")), cue: nil, client: "mqtt")
        spoken.clip.path = "/etc/passwd"
        var blank = spoken
        blank.ticket = 5
        blank.clip.say = " \n "
        try await stateFile.save(PersistedState(nextTicket: 6, waiting: [entry(3, "a"), spoken, blank]))
        guard case .loaded(let saved) = await stateFile.load() else { Issue.record("not saved"); return }
        #expect(saved.waiting[1].clip.say == "Dinner is ready")
        let core = Jukebox.test(
            ClipCatalog(session: session), stateFile: stateFile, time: TimeSource(clock: ManualClock()), speechFolder: folder.file("speech"))
        await core.restoreState()
        let restored = await core.snapshot()
        #expect(restored.queue.waiting.map(\.ticket) == [3, 4])
        let announcement = try #require(restored.queue.waiting.last?.clip)
        #expect(announcement.speech == "Dinner is ready" && announcement.title == "say: Dinner is ready")
        #expect(announcement.source.path == "", "the saved path is not used: the audio comes from the engine")
        #expect(restored.queue.history.last?.entry.ticket == 5)
        #expect(restored.queue.history.last?.outcome == .failed(reason: "the announcement's text is not valid; skipped"))
    }
}

extension StateTests {
    /// An entry's own volume and length survive a restart; ones edited by hand out of range
    /// (a volume of 1e20, a length of 0 or of ten years) come back held to what is allowed.
    @Test func anEntrysOwnVolumeAndLengthSurviveARestart() async throws {
        let session = Session(name: "t", sourcePath: "/s.json", clipsDirectory: "/clips", clips: [
            Clip(id: "a", source: ClipSource(file: "a.wav", path: "/clips/a.wav")),
        ])
        let stateFile = StateFile(path: folder.file("state.json"))
        var own = entry(3, "a", client: "siren")
        (own.volume, own.stopAfter) = (0.4, 12.5)
        var loud = entry(4, "a")
        (loud.volume, loud.stopAfter) = (1e20, 0)
        var long = entry(5, "a")
        (long.volume, long.stopAfter) = (-3, 315_360_000)
        try await stateFile.save(PersistedState(nextTicket: 6, waiting: [own, loud, long]))
        #expect(String(decoding: try folder.read("state.json"), as: UTF8.self).contains(#""stopAfter":12.5,"ticket":3,"volume":0.4}"#))
        let core = Jukebox.test(ClipCatalog(session: session), stateFile: stateFile, time: TimeSource(clock: ManualClock()))
        await core.restoreState()
        let restored = await core.snapshot().queue.waiting.map(\.playing)
        #expect(restored == [
            .init(volume: 0.4, stopAfter: .milliseconds(12_500)), .init(volume: 1, stopAfter: nil), .init(volume: 0, stopAfter: nil),
        ])
    }
}

/// The front end an entry came through is kept with it across a restart; an entry saved
/// without one (by an earlier version) is named by the front ends' own words, as then.
@Suite("Saved state: who asked")
struct SavedRequesterTests {
    func clip() -> PersistedState.Clip { .init(id: "a", file: "a.wav", path: "/clips/a.wav", title: "a", gain: 0) }

    @Test func theFrontEndIsKeptAndEarlierFilesAreReadAsThenNamed() throws {
        for requester in [Requester(.web, name: "kitchen"), Requester(.socket, name: "pi"), Requester(.siren, name: "siren"), Requester(.soundTest, name: "test")] {
            let entry = QueueEntry(ticket: 1, clip: PlayableClip(id: "a", source: ClipSource(file: "a.wav", path: "/clips/a.wav")), origin: .client(requester))
            let saved = PersistedState.Entry(entry)
            #expect(saved.client == requester.name)
            #expect(saved.via == (requester.frontEnd == .socket ? nil : requester.frontEnd.rawValue))
            #expect(saved.queueEntry.origin == .client(requester))
        }
        for (name, frontEnd) in [("web", Requester.FrontEnd.web), ("mqtt", .mqtt), ("siren", .siren), ("test", .soundTest), ("pi", .socket)] {
            let earlier = PersistedState.Entry(ticket: 1, clip: clip(), cue: nil, client: name)
            #expect(earlier.queueEntry.origin == .client(Requester(frontEnd, name: name)))
        }
    }
}
