import JukeboxTestSupport
import Logging
import Synchronization
import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// Alerts: the session's `alerts` (each field checked, the limits at, under and over), and
/// an alert in the core: it cuts in, repeats every `every`, is all that plays while it is on,
/// sounds at its own level above `maxVolume`, ends with its end clip and then what waited,
/// and is saved before it is answered, so a restart sounds it again first. Clips are at 1000
/// frames a second through a fake output on a manual clock.
@Suite("Alerts", .timeLimit(.minutes(1)))
struct AlertTests {
    static let path = "/srv/school/session.json"
    static let clips = #""clips": [ { "file": "bell.wav" }, { "file": "lockdown.wav", "enabled": false }, { "file": "all-clear.wav", "enabled": false } ]"#

    func load(_ text: String) throws(SessionLoadError) -> Session { try SessionLoader.parse(Array(text.utf8), path: Self.path) }

    func problems(_ alerts: String) -> [String] {
        do {
            _ = try load("{ \"alerts\": \(alerts), \(Self.clips) }")
            return []
        } catch {
            #expect(error.exitCode == 65)
            return error.problems
        }
    }

    // MARK: - The session

    @Test func theIssuesExampleIsReadInTheFilesOrder() throws {
        let session = try load("""
            { "alerts": {
                "lockdown": {"clip": "lockdown", "every": "30s", "end": "all-clear", "level": 1.0},
                "evacuate": {"say": "Leave the building now", "every": "0s"}
              },
              \(Self.clips) }
            """)
        #expect(session.alerts.map(\.name) == ["lockdown", "evacuate"], "as the file lists them")
        #expect(session.alert(named: "lockdown") == AlertSettings(name: "lockdown", sound: .clip("lockdown"), every: .seconds(30), end: "all-clear", level: 1))
        #expect(session.alert(named: "evacuate") == AlertSettings(name: "evacuate", sound: .say("Leave the building now"), every: .zero, end: nil, level: 1))
    }

    @Test func eachFieldIsCheckedWithWhatToDo() {
        #expect(problems(#"{"lockdown": {"clip": "siren"}}"#) == [
            "\(Self.path):1: alerts.lockdown.clip: \"siren\" is not a clip of this session (its ids: bell, lockdown, all-clear)"])
        let all = problems(#"{"a": {"clip": "bell", "say": "x"}, "b": {}, "c": {"clip": "bell", "end": 3, "lvl": 1}, "off": {"clip": "bell"}, "d e": {"clip": "bell"}}"#)
        #expect(all.contains { $0.hasSuffix("alerts.a: has both \"clip\" and \"say\": give one, the sound the alert repeats") }, "\(all)")
        #expect(all.contains { $0.hasSuffix("alerts.b: needs \"clip\" (the id of the clip it repeats) or \"say\" (text to speak)") }, "\(all)")
        #expect(all.contains { $0.hasSuffix("alerts.c.end: 3 is not a clip's id (the clip played once when the alert ends)") }, "\(all)")
        #expect(all.contains { $0.hasSuffix("alerts.c.lvl: unknown key (did you mean \"level\"?)") }, "\(all)")
        #expect(all.contains { $0.contains("alerts.off: \"off\" cannot be an alert's name") }, "\(all)")
        #expect(all.contains { $0.contains("alerts.d e: \"d e\" is not an alert's name") }, "\(all)")
        #expect(problems(#"{"a": {"say": ""}}"#).first?.hasSuffix("alerts.a.say: the text to say is empty") == true)
        #expect(problems("[]").first?.hasSuffix("alerts: a list is not 1 to 8 named alerts, such as {\"lockdown\": {\"clip\": \"lockdown\", \"every\": \"30s\", \"end\": \"all-clear\"}}") == true)
        #expect(problems("{}").count == 1, "an empty section is a mistake too")
    }

    /// `every` from 0 s to an hour, `level` from 0 to 1: at, under and over each end.
    @Test(arguments: [
        ("\"0s\"", true), ("\"-1s\"", false), ("\"1h\"", true), ("\"3601s\"", false), ("\"1h1s\"", false), ("30", true),
    ])
    func everyRunsFromBackToBackToAnHour(every: String, accepted: Bool) {
        let found = problems(#"{"a": {"clip": "lockdown", "every": \#(every)}}"#)
        #expect(found.isEmpty == accepted, "\(every): \(found)")
        if !accepted { #expect(found.first?.contains("alerts.a.every") == true, "\(found)") }
    }

    @Test(arguments: [(0.0, true), (-0.01, false), (1.0, true), (1.01, false), (0.5, true)])
    func levelRunsFromZeroToFullScale(level: Double, accepted: Bool) {
        let found = problems(#"{"a": {"clip": "lockdown", "level": \#(level)}}"#)
        #expect(found.isEmpty == accepted, "\(level): \(found)")
        if !accepted { #expect(found.first?.hasSuffix("alerts.a.level: \(JSONValue.number(level).shortDescription) is out of range (0 to 1: the alert's level as a part of full scale)") == true, "\(found)") }
    }

    @Test(arguments: [AlertSettings.maxAlerts - 1, AlertSettings.maxAlerts, AlertSettings.maxAlerts + 1])
    func aSessionHasAtMostEightAlerts(count: Int) {
        let alerts = "{" + (0..<count).map { "\"a\($0)\": {\"clip\": \"lockdown\"}" }.joined(separator: ", ") + "}"
        let found = problems(alerts)
        if count <= AlertSettings.maxAlerts {
            #expect(found.isEmpty, "\(found)")
        } else {
            #expect(found == ["\(Self.path):1: alerts: has \(count) alerts, more than the 8 a session may have"])
        }
    }

    @Test(arguments: [AlertSettings.maxNameLength, AlertSettings.maxNameLength + 1])
    func anAlertsNameHasAtMostFortyCharacters(length: Int) {
        let found = problems("{\"\(String(repeating: "a", count: length))\": {\"clip\": \"lockdown\"}}")
        #expect(found.isEmpty == (length <= AlertSettings.maxNameLength), "\(found)")
    }

    // MARK: - In the core

    let clock = ManualClock()
    let sink = FakeSink(deviceName: "one")

    /// long (tag 1, a second), a (tag 2), alarm (tag 50) and clear (tag 60), a tenth of a
    /// second each; the alert `lockdown` repeats alarm every 30 s and ends with clear.
    static let decoder = Fixtures.decoder([("long", 1, 1_000), ("a", 2, 100), ("alarm", 50, 100), ("clear", 60, 100), ("other", 70, 100)])

    func session(level: Double = 1, maxVolume: Double = 1, every: Duration = .seconds(30)) -> Session {
        let clips = ["long", "a", "alarm", "clear", "other"].map { Clip(id: $0, source: ClipSource(file: "\($0).wav", path: "/clips/\($0).wav")) }
        var session = Session(
            name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", interval: .seconds(3600) ... .seconds(3600), volume: maxVolume,
            clips: clips)
        session.maxVolume = maxVolume
        session.alerts = [
            AlertSettings(name: "lockdown", sound: .clip("alarm"), every: every, end: "clear", level: level),
            AlertSettings(name: "evacuate", sound: .clip("other"), every: every),
        ]
        return session
    }

    func make(_ session: Session, stateFile: StateFile? = nil) -> Jukebox {
        let sink = sink
        return Jukebox.test(
            ClipCatalog(session: session), decoder: Self.decoder, makeSink: { _, _ in sink }, stateFile: stateFile,
            time: TimeSource(clock: clock, wallClock: { 1_000 }))
    }

    /// The clips heard, in order: one name for each run of writes (a fade in from silence,
    /// whose first sample is 0, is part of the clip it leads into).
    func heard() async -> [String] {
        let names = [1: "long", 2: "a", 50: "alarm", 60: "clear", 70: "other"]
        var runs: [String] = []
        for tag in await sink.writeRuns where tag != 0 {
            let name = names[tag] ?? "\(tag)"
            if runs.last != name { runs.append(name) }
        }
        return runs
    }

    /// The alert cuts the clip playing where it is heard, sounds, waits its `every`, sounds
    /// again, and nothing else plays meanwhile; ended, its end clip plays, then the cut clip
    /// goes on and what was queued follows, in order. The history keeps the run as one play.
    @Test func anAlertCutsInRepeatsAndEndsWithItsEndClipThenWhatWaited() async throws {
        let core = make(session())
        await sink.gateWrites(true)
        let running = Task { try await core.run() }
        defer { running.cancel() }
        _ = try await core.enqueue(["long"], cue: false, client: "test")
        await sink.letWritesThrough(2)
        _ = try await core.enqueue(["a"], cue: false, client: "test")
        let started = try await core.startAlert("lockdown", client: "office").value
        #expect(started.name == "lockdown" && started.by.name == "office")
        await sink.gateWrites(false)
        await sink.wait { $0.frames(tag: 50) >= 100 }
        // Waiting out the 30 s between soundings; a queued clip does not slip in.
        #expect(await clock.advance { await sink.framesWritten(tag: 50) >= 200 })
        #expect(await sink.framesWritten(tag: 2) == 0, "nothing else plays while it is on")
        #expect(await core.snapshot().queue.waiting.map(\.clip.id) == ["long", "a"], "what was queued waits")
        #expect(await core.snapshot().queue.alert?.soundings == 2)
        let ended = try await core.endAlert(client: "office").value
        #expect(ended?.name == "lockdown")
        await sink.wait { $0.frames(tag: 2) >= 100 }
        #expect(await heard() == ["long", "alarm", "clear", "long", "a"])
        #expect(await sink.framesWritten(tag: 50) == 200, "ended: no sounding after it")
        #expect(await sink.framesWritten(tag: 60) == 100, "the end clip once")
        let history = await core.snapshot().queue.history.map { "\($0.entry.clip.id) \($0.outcome.name): \($0.outcome.reason ?? "")" }
        #expect(history.contains("alarm alert: the lockdown alert, started by office, sounded 2 times; ended by office"), "\(history)")
        #expect(await core.snapshot().queue.alert == nil)
    }

    /// An alert plays at its own level, whatever the volume and `maxVolume` say; the clips
    /// before and after it at the volume.
    @Test func anAlertSoundsAtItsOwnLevelAboveMaxVolume() async throws {
        let core = make(session(level: 0.5, maxVolume: 0.2))
        let running = Task { try await core.run() }
        defer { running.cancel() }
        _ = try await core.enqueue(["other"], cue: false, client: "test")
        await sink.wait { $0.frames(tag: 14) >= 100 }
        _ = try await core.startAlert("lockdown", client: "office")
        await sink.wait { $0.frames(tag: 25) >= 100 }
        _ = try await core.endAlert(client: "office")
        await sink.wait { $0.frames(tag: 30) >= 100 }
        #expect(await sink.writeRuns == [14, 25, 30], "other at the volume (0.2), the alarm and its end clip at the alert's level (0.5)")
    }

    /// A pause neither holds an alert back nor stops it, and a skip does not end it; the
    /// queue is still paused once it ends.
    @Test func aPauseOrASkipDoesNotStopAnAlert() async throws {
        let core = make(session())
        let running = Task { try await core.run() }
        defer { running.cancel() }
        _ = await core.pause()
        _ = try await core.enqueue(["a"], cue: false, client: "test")
        await sink.gateWrites(true)
        _ = try await core.startAlert("lockdown", client: "office")
        await sink.waitForGatedWrite()
        _ = await core.pause()
        #expect(await core.skip().value == nil, "a skip does not end an alert")
        await sink.gateWrites(false)
        await sink.wait { $0.frames(tag: 50) >= 100 }
        _ = try await core.endAlert(client: "office")
        await sink.wait { $0.frames(tag: 60) >= 100 }
        #expect(await heard() == ["alarm", "clear"], "the end clip plays while paused; a waits for the resume")
        #expect(await core.snapshot().queue.paused)
        _ = await core.resume()
        await sink.wait { $0.frames(tag: 2) >= 100 }
    }

    /// Starting another alert replaces the one on: it cuts the sounding, the history says
    /// so, and only the second's end clip plays.
    @Test func anotherAlertReplacesTheFirstAndTheHistorySaysSo() async throws {
        let core = make(session())
        let running = Task { try await core.run() }
        defer { running.cancel() }
        await sink.gateWrites(true)
        _ = try await core.startAlert("lockdown", client: "office")
        await sink.waitForGatedWrite()
        let second = try await core.startAlert("evacuate", client: "hall").value
        #expect(second.name == "evacuate")
        await sink.gateWrites(false)
        await sink.wait { $0.frames(tag: 70) >= 100 }
        _ = try await core.endAlert(client: "hall")
        #expect(await clock.advance { await core.snapshot().queue.current == nil })
        #expect(await sink.framesWritten(tag: 60) == 0, "the first's end clip does not play")
        let reasons = await core.snapshot().queue.history.compactMap(\.outcome.reason)
        #expect(reasons.contains("the lockdown alert, started by office, sounded once; replaced by the evacuate alert (hall)"), "\(reasons)")
        #expect(reasons.contains("the evacuate alert, started by hall, sounded once; ended by hall"), "\(reasons)")
    }

    /// Refusals name what to do: an alert the session has not, and a session with none.
    @Test func anUnknownAlertIsRefusedWithTheSessionsAlerts() async throws {
        let core = make(session())
        await #expect(throws: JukeboxError.invalidParameter("\"lock\" is not an alert of this session (its alerts: lockdown, evacuate)")) {
            _ = try await core.startAlert("lock", client: "office")
        }
        var none = session()
        none.alerts = []
        await #expect(throws: JukeboxError.self) { _ = try await make(none).startAlert("lockdown", client: "office") }
        #expect(try await core.endAlert(client: "office").value == nil, "ending none is no error")
    }

    /// The alert is on disk before it is answered; after the daemon dies with it on, the
    /// next start sounds it first, before what waited, and it goes on until ended.
    @Test func anAlertIsLatchedAndSoundsFirstAfterARestart() async throws {
        let folder = try TemporaryDirectory()
        let stateFile = StateFile(path: folder.file("state.json"))
        do {
            let core = make(session(), stateFile: stateFile)
            await core.restoreState()
            _ = await core.pause()
            _ = try await core.durable(await core.enqueue(["a"], cue: false, client: "test"))
            _ = try await core.durable(await core.startAlert("lockdown", client: "office"))
            let saved = try String(decoding: FilePath.read(stateFile.path, limit: 1 << 20), as: UTF8.self)
            #expect(saved.contains(#""alert":{"client":"office","name":"lockdown","since":1000.0}"#), "\(saved)")
            // Killed: never run, never shut down.
        }
        let core = make(session(), stateFile: stateFile)
        await core.restoreState()
        #expect(await core.snapshot().queue.alert?.name == "lockdown")
        let running = Task { try await core.run() }
        defer { running.cancel() }
        await sink.wait { $0.frames(tag: 50) >= 100 }
        #expect(await heard() == ["alarm"], "the alert first")
        #expect(await core.snapshot().queue.waiting.map(\.clip.id) == ["a"], "what waited still waits")
        _ = try await core.durable(await core.endAlert(client: "office"))
        let saved = try String(decoding: FilePath.read(stateFile.path, limit: 1 << 20), as: UTF8.self)
        #expect(!saved.contains(#""alert":{"#), "ended, it is off on disk too")
    }

    /// A device that is missing when the alert starts is tried again as for any clip, and the
    /// alert sounds as soon as it is back.
    @Test func anAlertSoundsAsSoonAsAMissingDeviceIsBack() async throws {
        let unplugged = AudioDeviceError(code: .disconnected, device: "one", operation: "open", reason: "No such device")
        await sink.failOpens([unplugged, unplugged])
        let core = make(session())
        let running = Task { try await core.run() }
        defer { running.cancel() }
        _ = try await core.startAlert("lockdown", client: "office")
        #expect(await clock.advance { await sink.framesWritten(tag: 50) >= 100 }, "sounded once the device opened")
        #expect(await core.snapshot().queue.alert?.soundings == 1, "one sounding, tried until the device came back")
        #expect(await core.snapshot().queue.history.isEmpty, "nothing failed or was skipped meanwhile")
    }

    /// `status` and `health` show it: on, and healthy all the same.
    @Test func healthSaysTheAlertIsOnAndHealthy() async throws {
        let core = make(session())
        _ = try await core.startAlert("lockdown", client: "office")
        let health = await core.health()
        #expect(health.isHealthy)
        #expect(health.words == "ok; the lockdown alert is on")
        #expect(await core.metrics().alerts.map { "\($0.name) \($0.on)" } == ["lockdown true", "evacuate false"])
    }
}
