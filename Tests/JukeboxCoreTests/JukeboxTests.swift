import Glibc
import Logging
import JukeboxTestSupport
import Synchronization
import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// The application core, driven the way every front end drives it, through a fake output
/// and a manual clock: no sockets, no sound card.
@Suite("Application core", .timeLimit(.minutes(1)))
struct JukeboxTests {
    let clock = ManualClock()
    /// The fake output for each device name; the core builds its output from the session.
    let outputs = ["one": FakeSink(deviceName: "one"), "two": FakeSink(deviceName: "two")]
    /// What `reload` reads.
    let sessionFile = SessionFile()

    final class SessionFile: Sendable {
        private let session = Mutex<Session?>(nil)
        func withLock<T>(_ body: (inout Session?) -> T) -> T { session.withLock { body(&$0) } }
    }

    func clip(_ id: String, in folder: String = "/clips") -> Clip {
        Clip(id: id, source: ClipSource(file: "\(id).wav", path: "\(folder)/\(id).wav"))
    }

    func session(
        _ clips: [Clip], device: String = "one", volume: Double = 1, duration: Duration? = nil, cue: ClipSource? = nil,
        folder: String = "/clips"
    ) -> Session {
        Session(
            name: "t", sourcePath: "\(folder)/s.json", clipsDirectory: folder, output: .alsa(device: device),
            interval: .seconds(10) ... .seconds(10), duration: duration, cue: cue, volume: volume, clips: clips)
    }

    func make(
        _ catalog: ClipCatalog, decoder: FakeDecoder, logger: Logger = .quiet, vetClientDevice: (@Sendable (String) async -> String?)? = nil
    ) -> Jukebox {
        sessionFile.withLock { $0 = catalog.session }
        let outputs = outputs
        return Jukebox.test(
            catalog, decoder: decoder, makeSink: { output, _ in outputs["\(output)"]! }, loadSession: { [sessionFile] in sessionFile.withLock { $0! } }, time: TimeSource(clock: clock, wallClock: { 1_000 }), logger: logger,
            vetClientDevice: vetClientDevice)
    }

    /// The web remote and MQTT are set up at start-up: a reload that changes their sections
    /// says a restart is needed, rather than leaving the old settings in use unsaid.
    @Test func aReloadThatChangesTheFrontEndsSaysARestartIsNeeded() async throws {
        let decoder = Fixtures.decoder([("a", 1, 100)])
        let log = LogCollector()
        let core = make(await ClipCatalog.probing(session([clip("a")]), with: decoder), decoder: decoder, logger: Logger(label: "t") { _ in log })
        _ = try await core.reload()
        #expect(!log.contains("section changed"), "nothing changed")
        sessionFile.withLock { $0?.mqtt = MQTTSettings(host: "broker", topic: "jukeboxd/t") }
        _ = try await core.reload()
        #expect(log.contains("the session's mqtt section changed; it is read at start-up, so restart jukeboxd"))
        #expect(!log.contains("http section"))
    }

    /// The problems of clips and the cue's are kept apart, so a clip may be called "cue":
    /// it used to share the key of a cue that could not be played, and was never scheduled.
    @Test func aClipCalledCueIsScheduledWhenTheCueCannotBePlayed() async {
        let decoder = Fixtures.decoder([("cue", 1, 100)])
        let catalog = await ClipCatalog.probing(
            session([clip("cue")], cue: ClipSource(file: "gone.wav", path: "/clips/gone.wav")), with: decoder)
        #expect(catalog.playableClips.map(\.id) == ["cue"])
        #expect(catalog.problems.isEmpty)
        #expect(catalog.cueProblem == "gone.wav: no such file")
        #expect(catalog.session.cue == nil, "the clips play without the cue")
        let core = make(catalog, decoder: decoder)
        #expect(await core.pick().value?.clip.id == "cue")
        #expect(await core.snapshot().clips.map(\.problem) == [nil])
    }

    /// A reload that names another device plays the clip playing now to its end on the old
    /// one and the next on the new one; a new volume is heard at once.
    @Test func reloadSwitchesTheOutputBetweenClipsAndTheVolumeAtOnce() async throws {
        let decoder = Fixtures.decoder([("a", 1, 1_000), ("b", 2, 100)])
        let first = session([clip("a"), clip("b")])
        let core = make(ClipCatalog(session: first), decoder: decoder)
        let (one, two) = (outputs["one"]!, outputs["two"]!)
        await one.gateWrites(true)
        let running = Task { try await core.run() }
        _ = try await core.enqueue(["a"], cue: false, client: "test")
        await one.waitForGatedWrite()
        sessionFile.withLock { $0 = session([clip("a"), clip("b")], device: "two") }
        _ = try await core.reload()
        #expect(await core.snapshot().player.deviceName == "one", "the clip playing now ends where it started")
        _ = try await core.enqueue(["b"], cue: false, client: "test")
        await one.gateWrites(false)
        await two.wait(until: { $0.contains(.write(tag: 2, frames: 36)) })
        #expect(await one.framesWritten(tag: 1) == 1_000, "a played to its end")
        #expect(await one.events.last == .close, "the old device was released")
        #expect(await two.framesWritten(tag: 1) == 0)
        #expect(await core.snapshot().player.deviceName == "two")
        sessionFile.withLock { $0 = session([clip("a"), clip("b")], device: "two", volume: 0.5) }
        _ = try await core.reload()
        #expect(await core.snapshot().player.volume == 0.5, "a new volume applies at once")
        running.cancel()
    }

    /// The watchdog watches the output a clip plays through. A reload that names another
    /// device used to point it at the new one at once, while the clip playing went on
    /// through the old: a call stuck there went unseen, and systemd never restarted the
    /// daemon. It watches the old one until the clip on it has ended.
    @Test func theWatchdogWatchesTheOutputTheClipPlaysThroughWhileTheOutputIsSwitched() async throws {
        let decoder = Fixtures.decoder([("a", 1, 1_000), ("b", 2, 100)])
        let core = make(ClipCatalog(session: session([clip("a"), clip("b")])), decoder: decoder)
        let (one, two) = (outputs["one"]!, outputs["two"]!)
        await one.gateWrites(true)
        let running = Task { try await core.run() }
        _ = try await core.enqueue(["a"], cue: false, client: "test")
        await one.waitForGatedWrite()
        #expect(core.outputStall() != nil, "a write to \"one\" has not returned")
        sessionFile.withLock { $0 = session([clip("a"), clip("b")], device: "two") }
        _ = try await core.reload()
        #expect(core.outputStall() != nil, "the write to \"one\" is still stuck, and the watchdog sees it")
        await one.gateWrites(false)
        _ = try await core.enqueue(["b"], cue: false, client: "test")
        await two.wait(until: { $0.contains(.write(tag: 2, frames: 36)) })
        await two.gateWrites(true)
        _ = try await core.enqueue(["b"], cue: false, client: "test")
        await two.waitForGatedWrite()
        #expect(core.outputStall() != nil, "after the switch, the new output is the one watched")
        await two.gateWrites(false)
        running.cancel()
    }

    /// A reload puts one schedule in force for every part that keeps to it: once it is
    /// answered, quiet hours, the timetable and `next` all read the new one.
    @Test func aReloadedScheduleIsReadByEveryPartOnceTheReloadIsAnswered() async throws {
        let decoder = Fixtures.decoder([("a", 1, 100), ("bell", 2, 100)])
        var bell = clip("bell")
        bell.at = [try FixedTime.parse("*:00").get()]
        let core = make(ClipCatalog(session: session([clip("a"), bell])), decoder: decoder)
        #expect(await core.snapshot().quiet.quiet == false)
        #expect(await core.plan().fixedTimes.first.map { ($0.clip.id, $0.quiet) }! == ("bell", false))
        var quieter = session([clip("a"), bell])
        quieter.quiet = [TimeWindow(from: TimeOfDay("00:00")!, to: TimeOfDay("23:59")!)]
        sessionFile.withLock { $0 = quieter }
        _ = try await core.reload()
        #expect(await core.snapshot().quiet.quiet == true, "quiet hours read the new schedule")
        #expect(await core.plan().fixedTimes.first.map { ($0.clip.id, $0.quiet) }! == ("bell", true), "next reads it too")
        sessionFile.withLock { $0 = session([clip("a")]) }
        _ = try await core.reload()
        #expect(await core.plan().fixedTimes.isEmpty, "the timetable reads it: the bell is gone")
    }

    /// A duration added by a reload counts from start-up, like one read at start-up.
    @Test func reloadAppliesANewDurationFromStartUp() async throws {
        let decoder = Fixtures.decoder([("a", 1, 100)])
        let core = make(ClipCatalog(session: session([clip("a")])), decoder: decoder)
        let running = Task { try await core.run() }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(3))
        sessionFile.withLock { $0 = session([clip("a")], duration: .seconds(5)) }
        _ = try await core.reload()
        await clock.waitForSleepers(1)
        #expect(await core.snapshot().nextPick == nil, "the session ends before the next pick")
        clock.advance(by: .seconds(2))
        try await running.value
        #expect(await core.snapshot().queue.played == 0)
    }

    /// `jukebox play notes.txt` used to queue the file and fail when it came up.
    @Test func aFileThatIsNotAudioIsRefusedWhenQueued() async throws {
        let folder = try TemporaryDirectory()
        _ = try folder.write("notes.txt", text: "not audio")
        _ = try folder.write("a.wav", [0])
        var decoder = FakeDecoder(clips: [:])
        decoder.clips[folder.file("a.wav")] = FakeDecoder.Spec(tag: 1, frames: 100)
        let core = make(ClipCatalog(session: session([clip("a", in: folder.path)], folder: folder.path)), decoder: decoder)
        await #expect(throws: JukeboxError.unplayable("notes.txt", reason: "notes.txt: no such file")) {
            _ = try await core.enqueue(["notes.txt"], cue: false, client: "test")
        }
        await #expect(throws: JukeboxError.unplayable("notes.txt", reason: "notes.txt: no such file")) {
            _ = try await core.enqueue(["a", "notes.txt"], cue: false, client: "test")
        }
        #expect(await core.snapshot().queue.waiting.isEmpty, "all or none")
        #expect(try await core.enqueue(["a.wav"], cue: false, client: "test").value.map(\.entry.clip.id) == ["a"])
    }

    /// Once the device is back, the clip that waited for it shows as playing and the device
    /// as open, from its first block: the device's state has one owner, the player. It used
    /// to show "retrying" and the clip as waiting until the clip had ended.
    @Test func aClipShowsAsPlayingAsSoonAsItsDeviceIsBack() async throws {
        let decoder = Fixtures.decoder([("a", 1, 1_000)])
        let core = make(ClipCatalog(session: session([clip("a")])), decoder: decoder)
        let one = outputs["one"]!
        await one.failOpens([AudioDeviceError(code: .notFound, device: "one", operation: "open", reason: "No such file or directory")])
        await one.gateWrites(true)
        let (running, _) = try await runUntilTheDeviceIsRetried(core)
        #expect(await core.snapshot().waitingForDevice?.clip.id == "a")
        // The first retry comes half a second later.
        await clock.waitForSleeper(until: clock.now.advanced(by: .milliseconds(500)))
        clock.advance(by: .milliseconds(500))
        await one.waitForGatedWrite()
        let back = await core.snapshot()
        #expect(back.deviceState == .open)
        #expect(back.playing?.clip.id == "a")
        #expect(back.waitingForDevice == nil)
        await one.gateWrites(false)
        running.cancel()
    }

    /// Healthy while the device is missing for up to two minutes of retries; then unhealthy,
    /// naming the device and why; healthy again once it is back.
    @Test func theDaemonIsUnhealthyOnceTheDeviceHasBeenMissingForTwoMinutes() async throws {
        let decoder = Fixtures.decoder([("a", 1, 1_000)])
        let core = make(ClipCatalog(session: session([clip("a")])), decoder: decoder)
        let one = outputs["one"]!
        let gone = AudioDeviceError(code: .notFound, device: "one", operation: "open", reason: "No such file or directory")
        await one.failOpens(Array(repeating: gone, count: 50))
        await one.gateWrites(true)
        #expect(await core.health() == Jukebox.Health(problem: nil))
        var (running, events) = try await runUntilTheDeviceIsRetried(core)
        // Each retry's wait, as the queue announces it; the first is half a second.
        var (delay, missing) = (Duration.milliseconds(500), Duration.zero)
        while missing <= Jukebox.deviceMissingLimit {
            #expect(await core.health().isHealthy, "missing for \(missing)")
            await clock.waitForSleeper(until: clock.now.advanced(by: delay))
            clock.advance(by: delay)
            missing += delay
            while let event = await events.next() {
                if case .device(.retrying(let after, _)) = event { delay = after; break }
            }
        }
        let problem = try #require(await core.health().problem)
        #expect(problem.hasPrefix(#"the audio device "one" has been missing for 2m"#) && problem.hasSuffix(": No such file or directory"), "\(problem)")
        // Back at the next retry: healthy at once.
        await one.failOpens([])
        await clock.waitForSleeper(until: clock.now.advanced(by: delay))
        clock.advance(by: delay)
        await one.waitForGatedWrite()
        #expect(await core.health().isHealthy)
        await one.gateWrites(false)
        running.cancel()
    }

    /// Runs `core` with "a" queued, and returns once its device is being retried.
    func runUntilTheDeviceIsRetried(_ core: Jukebox) async throws -> (Task<Void, any Error>, AsyncStream<JukeboxEvent>.AsyncIterator) {
        let events = core.events.subscribe()
        let running = Task { try await core.run() }
        _ = try await core.enqueue(["a"], cue: false, client: "test")
        var iterator = events.makeAsyncIterator()
        while let event = await iterator.next() {
            if case .device(let state) = event, state.isRetrying { break }
        }
        return (running, iterator)
    }

    /// While the clip at the head waits for a missing device, the scheduler picks nothing
    /// (a backlog would play back to back later), and the clip shows as waiting, not playing.
    @Test func nothingIsPickedWhileAClipWaitsForTheDevice() async throws {
        let decoder = Fixtures.decoder([("a", 1, 100), ("b", 2, 100)])
        let core = make(ClipCatalog(session: session([clip("a"), clip("b")])), decoder: decoder)
        let missing = AudioDeviceError(code: .notFound, device: "one", operation: "open", reason: "No such file or directory")
        await outputs["one"]!.failOpens(Array(repeating: missing, count: 100))
        let (running, events) = try await runUntilTheDeviceIsRetried(core)
        let waiting = await core.snapshot()
        #expect(waiting.playing == nil)
        #expect(waiting.waitingForDevice?.clip.id == "a")
        #expect(waiting.nextPick == nil, "no pick is shown while picks are held back")
        #expect(waiting.deviceState.isRetrying)
        // Let the scheduler's moment come: it plans the next pick without picking.
        clock.advance(by: .seconds(10))
        var queued: [String] = []
        var iterator = events
        while let event = await iterator.next() {
            if case .queued(let entry, _) = event { queued.append(entry.clip.id) }
            if case .scheduled = event { break }
        }
        #expect(queued.isEmpty)
        #expect(await core.snapshot().queue.waiting.isEmpty)
        running.cancel()
    }
}
