import Foundation
import JukeboxTestSupport
import Subprocess
import Testing

/// Another local user must not be able to take the daemon's place on the control socket, nor
/// connect to it while it is being set up. Each test makes its own users with `useradd`.
@Suite("Control socket against another local user", .serialized, .enabled(if: UnixUser.isPossible, Comment(rawValue: UnixUser.impossible)), .timeLimit(.minutes(2)))
struct SocketSecurityTests {
    let folder: TemporaryDirectory

    init() throws {
        folder = try TemporaryDirectory()
        chmod(folder.path, 0o755)
        try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0.1, count: 800), encoding: .s16, rate: 8000, channels: 1))
        try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#)
        chmod(folder.file("a.wav"), 0o644)
        chmod(folder.file("s.json"), 0o644)
    }

    var binaries: String { DaemonProcess.binaryDirectory }

    /// The fallback socket lives in /tmp/jukeboxd-UID/. If another user made that folder
    /// first, neither the daemon nor the client of that UID will use it.
    @Test func aFallbackFolderMadeByAnotherUserIsRefusedByBothPrograms() async throws {
        try await withUsers(2) { users in
            let (victim, squatter) = (users[0], users[1])
            let squatted = "/tmp/jukeboxd-\(victim.uid)"
            #expect(mkdir(squatted, 0o777) == 0)
            #expect(chown(squatted, squatter.uid, squatter.gid) == 0)
            defer { rmdir(squatted) }
            let client = try await victim.run([binaries + "/jukebox", "pause"])
            #expect(client.status == 77)
            #expect(client.stderr == "jukebox: refusing the socket \(squatted)/jukeboxd.sock: \(squatted) belongs to \(squatter.name) (\(squatter.uid)), not to \(victim.name) (\(victim.uid)); someone else may be listening there\n")
            mkdir(folder.file("state"), 0o700)
            chmod(folder.file("state"), 0o700)
            chown(folder.file("state"), victim.uid, victim.gid)
            let daemon = try await victim.run([binaries + "/jukeboxd", folder.file("s.json"), "--state", folder.file("state/s.json"), "--device", "null"])
            #expect(daemon.status == 77)
            #expect(daemon.stderr.contains("refusing the control socket folder: \(squatted) belongs to \(squatter.name)"), "\(daemon.stderr)")
        }
    }

    /// A clips folder the user cannot reach (the package's /var/lib/jukeboxd is 0750) used to
    /// be reported as "not a folder". It is now named as out of that user's reach.
    @Test func aClipsFolderOutOfTheUsersReachIsNamedSo() async throws {
        try await withUsers(1) { users in
            let outsider = users[0]
            mkdir(folder.file("private"), 0o700)
            chmod(folder.file("private"), 0o700)
            mkdir(folder.file("private/clips"), 0o755)
            try folder.write("p.json", text: #"{ "clipsDirectory": "\#(folder.file("private/clips"))", "clips": [ { "file": "\#(folder.file("a.wav"))" } ] }"#)
            // Readable by the outsider, whatever the test run's umask.
            chmod(folder.file("p.json"), 0o644)
            chmod(folder.file("a.wav"), 0o644)
            let checked = try await outsider.run([binaries + "/jukeboxd", "--check", folder.file("p.json")])
            #expect(checked.status == 65)
            #expect(checked.stderr.contains(#"clipsDirectory: "\#(folder.file("private/clips"))" cannot be reached by \#(outsider.name) (\#(outsider.uid)): permission denied"#), "\(checked.stderr)")
        }
        // Its own user, who may look in, is told nothing.
        let mine = try await DaemonProcess.run(["--check", folder.file("p.json"), "--device", "null"])
        #expect(mine.status == 0, "\(mine.stderr)")
    }

    /// A daemon run by someone else, listening where the client looks, used to receive the
    /// client's commands and answer them ("paused"). The client now checks who serves the
    /// socket: root, itself, or the owner of the socket's folder.
    @Test func aDaemonOfAnotherUserIsNotTalkedTo() async throws {
        try await withUsers(1) { users in
            let squatter = users[0]
            mkdir(folder.file("open"), 0o777)
            chmod(folder.file("open"), 0o1777)
            mkdir(folder.file("theirs"), 0o700)
            // Set outright, whatever the test run's umask.
            chmod(folder.file("theirs"), 0o700)
            chown(folder.file("theirs"), squatter.uid, squatter.gid)
            let socket = folder.file("open/j.sock")
            let answer = try await squatter.withDaemon([
                binaries + "/jukeboxd", folder.file("s.json"), "--socket", socket, "--state", folder.file("theirs/s.json"), "--device", "null",
            ]) { try await DaemonProcess.run(["--socket", socket, "pause"], tool: "jukebox") }
            #expect(answer.status == 77)
            #expect(answer.stdout.isEmpty, "no forged answer is shown")
            #expect(answer.stderr == "jukebox: refusing the socket \(socket): it is served by \(squatter.name) (\(squatter.uid)), who is neither you, root nor the owner of \(folder.file("open")) (root (0))\n")
        }
    }

    /// Between `bind` and `chmod` the socket used to have the mode the umask gave it: with
    /// umask 000 another user's looping `connect()` won a working connection in most starts.
    /// It is now created open to its owner alone.
    @Test func theSocketIsNeverConnectableByAnotherUserWhileStarting() async throws {
        try await withUsers(1) { users in
            let other = users[0]
            mkdir(folder.file("open"), 0o777)
            chmod(folder.file("open"), 0o1777)
            let socket = folder.file("open/j.sock")
            let stop = folder.file("open/stop")
            let connector = """
                import os, socket, sys
                won = 0
                while not os.path.exists(sys.argv[2]):
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    try:
                        s.connect(sys.argv[1]); won += 1
                    except OSError:
                        pass
                    s.close()
                print(won)
                """
            let (executable, arguments) = other.command(["/usr/bin/python3", "-c", connector, socket, stop])
            async let connecting = Subprocess.run(executable, arguments: arguments, platformOptions: TestProcesses.options, output: .string(limit: 4096), error: .string(limit: 4096))
            for _ in 0..<15 {
                let start = try await Subprocess.run(
                    .path("/bin/sh"), arguments: ["-c", "umask 000; exec \"$0\" \"$@\"", binaries + "/jukeboxd", folder.file("s.json"),
                                                  "--socket", socket, "--state", folder.file("state.json"), "--device", "null"],
                    platformOptions: TestProcesses.options, input: .none, output: .discarded, error: .sequence
                ) { execution in
                    for try await line in execution.standardError.strings() where line.contains("control socket listening") {
                        try execution.send(signal: .terminate)
                    }
                }
                #expect(DaemonProcess.status(start.terminationStatus) == 0)
            }
            _ = FileManager.default.createFile(atPath: stop, contents: Data())
            let result = try await connecting
            #expect(result.standardError.isEmpty, "\(result.standardError)")
            #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "connections another user won")
        }
    }

    /// A user outside the socket's group used to be told about a socket path they never
    /// used (their own fallback). They are now told that the system socket's folder is closed
    /// to them, and how to join its group.
    @Test func aUserOutsideTheSocketsGroupIsToldHowToJoinIt() async throws {
        let folder = "/run/jukeboxd"
        guard access(folder, F_OK) != 0 else {
            Issue.record("\(folder) already exists (a jukeboxd service runs here?); this test needs to make it")
            return
        }
        try await withUsers(2) { users in
            let (outsider, service) = (users[0], users[1])
            #expect(mkdir(folder, 0o750) == 0)
            chmod(folder, 0o750)
            #expect(chown(folder, 0, service.gid) == 0)
            defer { rmdir(folder) }
            let client = try await outsider.run([binaries + "/jukebox", "status"])
            #expect(client.status == 69)
            #expect(client.stderr == "jukebox: cannot reach jukeboxd at /run/jukeboxd/jukeboxd.sock: permission denied: the folder /run/jukeboxd is open only to the \"\(service.name)\" group; join it with `sudo usermod -aG \(service.name) $USER`, then log out and in again\n")
        }
    }

    /// The daemon made /run/jukeboxd for its socket (as root, with nothing configured) and
    /// left it behind when it stopped, so the test above then found it there. It now removes
    /// the folder it made, as it removes its socket.
    @Test func theSocketFolderTheDaemonMadeIsGoneWhenItStops() async throws {
        let folder = "/run/jukeboxd"
        guard access(folder, F_OK) != 0 else {
            Issue.record("\(folder) already exists (a jukeboxd service runs here?); this test needs to make it")
            return
        }
        try self.folder.write("a.wav", WAVFile.bytes(Array(repeating: 0, count: 100), encoding: .s16, rate: 8000, channels: 1))
        let session = try self.folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#)
        // No --socket, JUKEBOX_SOCKET or XDG_RUNTIME_DIR: root's default, /run/jukeboxd/jukeboxd.sock.
        let unset = ["JUKEBOX_SOCKET": "", "XDG_RUNTIME_DIR": ""]
        let run = try await DaemonProcess.withDaemon(
            [session, "--state", self.folder.file("state.json"), "--device", "null"], ready: "control socket listening on /run/jukeboxd/jukeboxd.sock",
            environment: unset
        ) { _ in access(folder, F_OK) == 0 }
        #expect(run.status == 0)
        #expect(run.result, "the daemon made \(folder)")
        #expect(access(folder, F_OK) != 0, "\(folder) is gone after the stop")
    }

    /// The daemon runs as its own user and cannot read the client's files: the upload brings
    /// the bytes over the socket, from a folder only the client may read.
    @Test func anUploadReachesADaemonRunAsAnotherUser() async throws {
        try await withUsers(1) { users in
            let service = users[0]
            let clips = folder.file("service")
            mkdir(clips, 0o755)
            let tone = WAVFile.bytes(WAVFile.tone(frequency: 330, frames: 4000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
            try folder.write("service/a.wav", tone)
            try folder.write("service/s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#)
            // Modes set outright, whatever the test run's umask.
            for path in [clips, clips + "/a.wav", clips + "/s.json"] {
                chown(path, service.uid, service.gid)
                chmod(path, path == clips ? 0o755 : 0o644)
            }
            let mine = try TemporaryDirectory()
            chmod(mine.path, 0o700)
            try mine.write("recorded.wav", tone)
            let socket = clips + "/c.sock"
            let added = try await service.withDaemon([
                binaries + "/jukeboxd", clips + "/s.json", "--socket", socket, "--state", clips + "/state.json", "--device", "null",
            ]) { try await DaemonProcess.run(["--socket", socket, "add", mine.file("recorded.wav")], tool: "jukebox") }
            #expect(added.status == 0, "\(added.stderr)")
            var info = stat()
            #expect(stat(clips + "/recorded.wav", &info) == 0)
            #expect(info.st_uid == service.uid, "stored by the daemon's user")
            #expect(try folder.read("service/recorded.wav") == tone)
        }
    }
}
