import Glibc
import JukeboxCore
import JukeboxTestSupport
import Testing
import JukeboxCoreTestSupport

/// Where the state may be written: never a shared folder, never through a planted symlink,
/// and nothing restored from it that points outside the clips folder.
@Suite("State file location", .timeLimit(.minutes(1)))
struct StateLocationTests {
    let folder: TemporaryDirectory
    init() throws { folder = try TemporaryDirectory() }

    @Test func withoutHomeOrStateFoldersThereIsNoDefault() {
        #expect(throws: StateLocationError(
            message: "no place for the state file: HOME, XDG_STATE_HOME and STATE_DIRECTORY are all unset; give one with --state PATH (in a folder of your own)", exitCode: 78)) {
            try StateFile.defaultPath(sessionName: "s", environment: ["PATH": "/bin"])
        }
        #expect(throws: StateLocationError.self) { try StateFile.defaultPath(sessionName: "s", environment: ["HOME": "", "XDG_STATE_HOME": ""]) }
    }

    @Test func defaultsInOrder() throws {
        #expect(try StateFile.defaultPath(sessionName: "a/b", environment: ["HOME": "/home/pi"]) == "/home/pi/.local/state/jukeboxd/a-b.json")
        #expect(try StateFile.defaultPath(sessionName: "s", environment: ["HOME": "/home/pi", "XDG_STATE_HOME": "/x"]) == "/x/jukeboxd/s.json")
        #expect(try StateFile.defaultPath(sessionName: "s", environment: ["HOME": "/home/pi", "STATE_DIRECTORY": "/var/lib/jukeboxd:/other"]) == "/var/lib/jukeboxd/state.json")
    }

    /// State files used to be named after the session as it is, spaces and all (`Desk
    /// reminders.json`, its authority in `Desk reminders.tls/`). They are now named without
    /// spaces, and a file of the earlier name is moved with what lies beside it.
    @Test func namesNeedNoQuotingAndTheEarlierNameIsMoved() throws {
        #expect(StateFile.fileName(forSession: "Desk reminders") == "desk-reminders")
        #expect(StateFile.fileName(forSession: "  Küche: 7 Uhr!  ") == "küche-7-uhr")
        #expect(StateFile.fileName(forSession: "../..") == "session")
        #expect(StateFile.fileName(forSession: String(repeating: "a", count: 300)).count == 100)
        let environment = ["XDG_STATE_HOME": folder.path]
        let path = try StateFile.defaultPath(sessionName: "Desk reminders", environment: environment)
        #expect(path == folder.file("jukeboxd/desk-reminders.json"))
        // Nothing of the earlier name: nothing moves.
        #expect(StateFile.moveFromEarlierName(to: path, sessionName: "Desk reminders", environment: environment) == nil)
        mkdir(folder.file("jukeboxd"), 0o700)
        try folder.write("jukeboxd/Desk reminders.json", text: "{}")
        mkdir(folder.file("jukeboxd/Desk reminders.tls"), 0o700)
        try folder.write("jukeboxd/Desk reminders.tls/ca.crt", text: "authority")
        // Not while a jukeboxd still runs with it.
        let held = try StateLock(statePath: folder.file("jukeboxd/Desk reminders.json"))
        #expect(StateFile.moveFromEarlierName(to: path, sessionName: "Desk reminders", environment: environment) == nil)
        withExtendedLifetime(held) {}
        _ = consume held
        #expect(StateFile.moveFromEarlierName(to: path, sessionName: "Desk reminders", environment: environment) == folder.file("jukeboxd/Desk reminders.json"))
        #expect(try folder.read("jukeboxd/desk-reminders.json") == Array("{}".utf8))
        #expect(try folder.read("jukeboxd/desk-reminders.tls/ca.crt") == Array("authority".utf8))
        #expect(!FilePath.exists(folder.file("jukeboxd/Desk reminders.json")) && !FilePath.exists(folder.file("jukeboxd/Desk reminders.tls")))
        // Once moved, a new file of the earlier name is left alone: the new one is not replaced.
        try folder.write("jukeboxd/Desk reminders.json", text: "[]")
        #expect(StateFile.moveFromEarlierName(to: path, sessionName: "Desk reminders", environment: environment) == nil)
        #expect(try folder.read("jukeboxd/desk-reminders.json") == Array("{}".utf8))
        // Under systemd the state is state.json: no earlier name to look for.
        #expect(StateFile.moveFromEarlierName(to: "/var/lib/jukeboxd/state.json", sessionName: "Desk reminders", environment: ["STATE_DIRECTORY": folder.path]) == nil)
    }

    @Test func aFolderOfOursIsAcceptedAndMissingOnesAreMadePrivate() throws {
        let file = StateFile(path: folder.file("new/state.json"))
        try file.checkFolder()
        var info = stat()
        #expect(stat(folder.file("new"), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
    }

    @Test func aFolderOthersCanWriteInIsRefused() throws {
        mkdir(folder.file("open"), 0o700)
        chmod(folder.file("open"), 0o777)
        #expect(throws: StateLocationError(
            message: "the state folder \(folder.file("open")) is writable by everyone (mode 777); another user could replace the state, so it is not used: run chmod go-w \(folder.file("open")), or choose another folder with --state", exitCode: 78)) {
            try StateFile(path: folder.file("open/state.json")).checkFolder()
        }
        chmod(folder.file("open"), 0o770)
        #expect(throws: StateLocationError.self) { try StateFile(path: folder.file("open/state.json")).checkFolder() }
        // The folder systemd made for the service may be shared with its group.
        try StateFile(path: folder.file("open/state.json")).checkFolder(sharedFolder: folder.file("open"))
        #expect(throws: StateLocationError.self) { try StateFile(path: "/tmp/state.json").checkFolder() }
    }

    @Test func aFolderOfAnotherUserIsRefused() throws {
        let me = geteuid()
        let other: uid_t = me == 54_321 ? 54_322 : 54_321
        mkdir(folder.file("theirs"), 0o755)
        // As root the folder is given away; otherwise the same refusal is seen from the other side.
        let asUser: uid_t = me == 0 && chown(folder.file("theirs"), other, gid_t.max) == 0 ? me : other
        do {
            try StateFile(path: folder.file("theirs/state.json")).checkFolder(uid: asUser)
            Issue.record("another user's folder was accepted")
        } catch {
            #expect(error.exitCode == 78)
            #expect(error.message.hasPrefix("the state folder \(folder.file("theirs")) belongs to user "), "\(error.message)")
        }
    }

    /// Another user planted `.state.json.tmp` as a symlink to a file of the daemon's user: the
    /// write must replace the link, never write through it.
    @Test func aSymlinkPlantedAsTheTemporaryFileIsNotFollowed() async throws {
        let victim = try folder.write("victim", text: "precious")
        symlink(victim, folder.file(".state.json.tmp"))
        try await StateFile(path: folder.file("state.json")).save(PersistedState(nextTicket: 5))
        #expect(try folder.read("victim") == Array("precious".utf8))
        guard case .loaded(let state) = await StateFile(path: folder.file("state.json")).load() else {
            Issue.record("the state was not written")
            return
        }
        #expect(state.nextTicket == 5)
    }

    @Test func restoredEntriesOutsideTheClipsFolderAreRefused() {
        let session = Session(name: "s", sourcePath: "/srv/s.json", clipsDirectory: "/srv/clips", cue: ClipSource(file: "cue.wav", path: "/srv/clips/cue.wav"), clips: [
            Clip(id: "a", source: ClipSource(file: "../shared/a.wav", path: "/srv/shared/a.wav")),
        ])
        func entry(_ ticket: UInt64, _ path: String, cue: String? = nil) -> PersistedState.Entry {
            let clip = { (path: String) in PersistedState.Clip(id: "x", file: FilePath.lastComponent(path), path: path, title: "x", gain: 0) }
            return PersistedState.Entry(ticket: ticket, clip: clip(path), cue: cue.map(clip), client: nil)
        }
        let saved = PersistedState(nextTicket: 9, waiting: [
            entry(1, "/srv/shared/a.wav"), entry(2, "/etc/shadow"), entry(3, "/srv/clips/sub/b.wav", cue: "/srv/clips/cue.wav"),
            entry(4, "/srv/clips/../secret.wav"), entry(5, "/srv/clips/c.wav", cue: "/root/x.wav"),
        ], started: .init(ticket: 2, count: 1))
        let (state, refused) = saved.confined(to: session, now: 100)
        #expect(state.waiting.map(\.ticket) == [1, 3])
        #expect(refused.map(\.ticket) == [2, 4, 5])
        #expect(state.waiting[0].clip.within == nil, "listed in the session: the author's choice")
        #expect(state.waiting[1].clip.within == "/srv/clips", "checked again when it is opened")
        #expect(state.history.map(\.outcome) == ["failed", "failed", "failed"])
        #expect(state.history.first?.reason == "/etc/shadow is outside the session's clips folder /srv/clips; skipped")
        #expect(state.started == nil, "the start mark went with its entry")
    }
}
