import Glibc
import JukeboxTestSupport
import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// Editing the session through the core, on a real session file: every edit and every
/// refusal, without sockets.
@Suite("Session edits", .timeLimit(.minutes(1)))
struct SessionEditTests {
    let folder: TemporaryDirectory
    let path: String
    let decoder: FakeDecoder
    let core: Jukebox
    let sink = FakeSink()

    static let original = """
        {
          "name": "Desk",
          "interval": { "min": "20s", "max": "60s" },
          "clips": [
            { "file": "water.wav", "title": "Drink some water" },
            { "file": "eyes.wav", "weight": 2 }
          ]
        }

        """

    init() async throws {
        folder = try TemporaryDirectory()
        path = try folder.write("desk.json", text: Self.original)
        var decoder = FakeDecoder(clips: [:])
        for (tag, name) in ["water", "eyes", "walk", "chime"].enumerated() {
            _ = try folder.write("\(name).wav", [0])
            decoder.clips[folder.file("\(name).wav")] = FakeDecoder.Spec(tag: tag + 1, frames: 100)
        }
        _ = try folder.write("notes.txt", text: "not audio")
        self.decoder = decoder
        let path = path
        let session = try SessionLoader.load(path: path)
        core = Jukebox.test(
            await ClipCatalog.probing(session, with: decoder), decoder: decoder, makeSink: { [sink] _, _ in sink }, loadSession: { () throws(SessionLoadError) -> Session in try SessionLoader.load(path: path) })
    }

    func text() throws -> String { String(decoding: try folder.read("desk.json"), as: UTF8.self) }

    @Test func addingAClipWritesTheFileKeepsTheOldOneAndAppliesAtOnce() async throws {
        let before = await core.snapshot().session.revision
        let added = try await core.edit(.addClip(["file": .string("walk.wav"), "title": .string("Take a walk"), "windows": .array([
            .object(["from": .string("09:00"), "to": .string("18:00")]),
        ])]))
        #expect(added.durableMark == nil, "no state file here: nothing more to wait for")
        #expect(try text() == """
            {
              "name": "Desk",
              "interval": { "min": "20s", "max": "60s" },
              "clips": [
                { "file": "water.wav", "title": "Drink some water" },
                { "file": "eyes.wav", "weight": 2 },
                { "file": "walk.wav", "title": "Take a walk", "windows": [ { "from": "09:00", "to": "18:00" } ] }
              ]
            }

            """)
        #expect(String(decoding: try folder.read(".desk.json.bak"), as: UTF8.self) == Self.original, "the previous version is kept")
        #expect(added.value.revision == SessionDocument.revision(of: try folder.read("desk.json")))
        #expect(added.value.revision != before)
        #expect(added.value.clip?.clip.title == "Take a walk")
        let now = await core.snapshot()
        #expect(now.session.clips.map(\.id) == ["water", "eyes", "walk"])
        #expect(now.session.revision == added.value.revision)
        #expect(await core.scheduler.clips.map(\.id).contains("walk"), "the scheduler has it")
    }

    @Test func refusalsChangeNothing() async throws {
        await #expect(throws: JukeboxError.invalidParameter("the id \"water\" is already used by the clip of water.wav; give another id")) {
            _ = try await core.edit(.addClip(["file": .string("walk.wav"), "id": .string("water")]))
        }
        await #expect(throws: JukeboxError.unplayable("notes.txt", reason: "notes.txt: no such file")) {
            _ = try await core.edit(.addClip(["file": .string("notes.txt")]))
        }
        await #expect(throws: JukeboxError.outsideClipsDirectory("../secret.wav")) {
            _ = try await core.edit(.addClip(["file": .string("../secret.wav")]))
        }
        do {
            _ = try await core.edit(.updateClip(id: "eyes", ["weight": .number(0)]))
            Issue.record("a weight of 0 was accepted")
        } catch {
            guard case .editInvalid(let problems) = error else { Issue.record("\(error)"); return }
            #expect(problems == ["\(path):6: clips[1].weight: 0 is not a whole number from 1 to 1000"])
        }
        await #expect(throws: JukeboxError.unknownClip("eye", suggestions: ["eyes"])) {
            _ = try await core.edit(.removeClip(id: "eye", deleteFile: false))
        }
        await #expect(throws: JukeboxError.invalidParameter(#"updateSchedule has no field "clips" (it takes "interval", "activeHours", "duration", "cue", "volume", "maxVolume", "name", "leadIn", "fade", "keepDeviceOpen", "location", "holidays", "quiet", "atGrace")"#)) {
            _ = try await core.edit(.updateSchedule(["clips": .array([])]))
        }
        #expect(try text() == Self.original)
        #expect(!FilePath.isRegularFile(folder.file(".desk.json.bak")))
    }

    /// Hand edits are never overwritten.
    @Test func aFileChangedByHandIsNotOverwritten() async throws {
        let hand = Self.original.replacingOccurrences(of: "Desk", with: "Kitchen")
        _ = try folder.write("desk.json", text: hand)
        await #expect(throws: JukeboxError.sessionChangedOnDisk(path: path)) {
            _ = try await core.edit(.updateSchedule(["volume": .number(0.5)]))
        }
        #expect(try text() == hand)
        _ = try await core.reload()
        _ = try await core.edit(.updateSchedule(["volume": .number(0.5)]))
        #expect(try text().contains(#""name": "Kitchen""#), "after a reload the hand edit is kept and built on")
    }

    /// A session file that is gone counts as changed; one that cannot be read says why.
    @Test func aSessionFileThatIsGoneOrUnreadableIsNamed() async throws {
        #expect(unlink(path) == 0)
        await #expect(throws: JukeboxError.sessionChangedOnDisk(path: path)) {
            _ = try await core.edit(.updateSchedule(["volume": .number(0.5)]))
        }
        // A folder where the file was cannot be read, even by root.
        #expect(mkdir(path, 0o755) == 0)
        do {
            _ = try await core.edit(.updateSchedule(["volume": .number(0.5)]))
            Issue.record("an edit of a folder was made")
        } catch {
            guard case .sessionNotSaved(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.hasPrefix("cannot read \(path) again before writing it: "), "\(reason)")
            #expect(error.description.contains("is a directory") || error.description.lowercased().contains("folder"), "\(error.description)")
        }
    }

    /// Two editors: the one that saw an older revision is refused.
    @Test func anEditAgainstAnOldRevisionIsRefused() async throws {
        let seen = await core.snapshot().session.revision
        let first = try await core.edit(.updateClip(id: "eyes", ["title": .string("Rest your eyes")]), ifRevision: seen)
        await #expect(throws: JukeboxError.revisionMismatch(given: seen, current: first.value.revision)) {
            _ = try await core.edit(.updateClip(id: "eyes", ["title": .string("Look away")]), ifRevision: seen)
        }
        #expect(try text().contains(#""title": "Rest your eyes""#))
    }

    @Test func updatesKeepIdsAndClearFieldsWithNull() async throws {
        _ = try await core.edit(.updateClip(id: "water", ["file": .string("walk.wav"), "title": .null]))
        _ = try await core.edit(.updateClip(id: "eyes", ["windows": .array([.object(["from": .string("08:00"), "to": .string("09:00")])])]))
        _ = try await core.edit(.updateClip(id: "eyes", ["windows": .array([]), "enabled": .bool(false)]))
        _ = try await core.edit(.updateSchedule(["interval": .object(["min": .string("1m"), "max": .string("2m")]), "duration": .string("40m"), "cue": .string("chime.wav")]))
        _ = try await core.edit(.updateSchedule(["duration": .null]))
        #expect(try text() == """
            {
              "name": "Desk",
              "interval": { "min": "1m", "max": "2m" },
              "cue": "chime.wav",
              "clips": [
                { "id": "water", "file": "walk.wav" },
                { "file": "eyes.wav", "weight": 2, "enabled": false }
              ]
            }

            """)
        let session = await core.snapshot().session
        #expect(session.clips.map(\.id) == ["water", "eyes"], "a clip named after its file keeps its id")
        #expect(session.cue?.file == "chime.wav")
        #expect(session.duration == nil)
    }

    @Test func aRemovedClipsFileIsDeletedOnlyWhenNothingUsesIt() async throws {
        _ = try await core.edit(.addClip(["file": .string("walk.wav")]))
        _ = try await core.enqueue(["eyes"], cue: false, client: "test")
        let kept = try await core.edit(.removeClip(id: "eyes", deleteFile: true))
        #expect(kept.value.fileDeleted == false)
        #expect(kept.value.fileKept == "ticket 1 is still to play it")
        #expect(FilePath.isRegularFile(folder.file("eyes.wav")))
        let removed = try await core.edit(.removeClip(id: "water", deleteFile: true))
        #expect(removed.value.fileDeleted)
        #expect(!FilePath.isRegularFile(folder.file("water.wav")))
        #expect(await core.snapshot().queue.waiting.map(\.clip.id) == ["eyes"], "a waiting entry of a removed clip stays")
        await #expect(throws: JukeboxError.editInvalid(problems: ["\(path):4: clips: is empty (a session needs at least one clip)"])) {
            _ = try await core.edit(.removeClip(id: "walk", deleteFile: false))
        }
    }

    /// Where the order of an object's keys means something, the file's order is kept when it
    /// is written again: a calendar's first summary wins, and the plans and alerts are shown
    /// in their order. Written in alphabetical order, "Late start" would beat "No school".
    @Test func theOrderOfPlansSummariesAndAlertsIsKeptWhenTheFileIsWrittenAgain() throws {
        let text = #"""
            { "plans": { "regular": [], "late": [], "none": [] },
              "calendars": [ { "name": "school", "source": "school.ics", "plans": { "No school": "none", "Late start": "late" } } ],
              "alerts": { "lockdown": { "clip": "a" }, "evacuate": { "clip": "a" } },
              "clips": [ { "file": "a.wav" } ] }
            """#
        var document = try SessionDocument(parsing: Array(text.utf8), path: "/s/s.json")
        document.clips.append(.object(["file": .string("b.wav")]))
        let written = String(decoding: document.formatted(), as: UTF8.self)
        #expect(written.contains(#""plans": { "regular": [], "late": [], "none": [] }"#), "\(written)")
        #expect(written.contains(#""plans": { "No school": "none", "Late start": "late" }"#), "\(written)")
        #expect(written.contains(#""alerts": { "lockdown": { "clip": "a" }, "evacuate": { "clip": "a" } }"#), "\(written)")
        let session = try SessionLoader.parse(Array(written.utf8), path: "/s/s.json")
        #expect(session.dayPlans?.calendars.first?.plans.map(\.plan) == ["none", "late"])
        #expect(session.alerts.map(\.name) == ["lockdown", "evacuate"])
    }

    /// A clip too long for one line is written one key per line.
    @Test func longClipsAreBrokenUp() {
        let document = SessionDocument(fields: ["clips": .array([.object([
            "file": .string("a-very-long-file-name-for-a-reminder-about-the-bins.wav"), "title": .string("Put the bins out before eight"),
            "windows": .array([.object(["from": .string("18:00"), "to": .string("20:00"), "days": .array([.string("tue")])])]),
        ])])])
        #expect(String(decoding: document.formatted(), as: UTF8.self) == """
            {
              "clips": [
                {
                  "file": "a-very-long-file-name-for-a-reminder-about-the-bins.wav",
                  "title": "Put the bins out before eight",
                  "windows": [ { "from": "18:00", "to": "20:00", "days": ["tue"] } ]
                }
              ]
            }

            """)
    }

    /// An edit while a clip plays changes the session, not the clip: it plays to its end.
    @Test func anEditWhileAClipPlaysLetsItFinish() async throws {
        await sink.gateWrites(true)
        let running = Task { try await core.run() }
        _ = try await core.enqueue(["water"], cue: false, client: "test")
        await sink.waitForGatedWrite()
        _ = try await core.edit(.updateClip(id: "water", ["title": .string("Water!"), "gain": .number(-6)]))
        _ = try await core.edit(.removeClip(id: "eyes", deleteFile: true))
        #expect(await core.snapshot().playing?.clip.id == "water", "still playing")
        await sink.gateWrites(false)
        await sink.wait(until: { $0.contains(.write(tag: 1, frames: 36)) })
        #expect(await sink.framesWritten(tag: 1) == 100, "the clip played whole, at the gain it started with")
        #expect(await core.snapshot().session.clip(id: "water")?.title == "Water!")
        running.cancel()
    }
}
