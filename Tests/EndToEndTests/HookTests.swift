import Foundation
import JukeboxCore
import JukeboxTestSupport
import Testing

/// The session's hooks with the built daemon, playing through ALSA's file plugin: their order
/// around the sound, what they are told, and hooks that fail, hang or are given hostile text.
@Suite("Hooks", .timeLimit(.minutes(1)))
struct HookTests {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }
    var output: String { folder.file("out.raw") }
    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "file:FILE=\(output),FORMAT=raw", "--log-level", "debug"] }
    static let hostileTitle = #"$(touch pwned) `touch pwned2` 'q' "dq"; touch pwned3"#

    init() throws {
        folder = try TemporaryDirectory()
        let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 4000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
        try folder.write("water.wav", tone)
    }

    /// A hook that appends `MOMENT|ID|TITLE|TICKET|ORIGIN|OUTCOME|bytes of sound so far` to a log.
    func recorder(_ moment: String) -> String {
        let script = #"printf '%s|%s|%s|%s|%s|%s|%s\n' "$JUKEBOX_HOOK" "$JUKEBOX_CLIP_ID" "$JUKEBOX_CLIP_TITLE" "$JUKEBOX_TICKET" "$JUKEBOX_ORIGIN" "$JUKEBOX_OUTCOME" "$(wc -c < "$2" 2>/dev/null || echo none)" >> "$1""#
        return #"["/bin/sh", "-c", "\#(script.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))", "hook", "\#(folder.file("hooks.log"))", "\#(output)"]"#
    }

    @Test func hooksRunAroundTheSoundWithTheClipInTheirEnvironmentAndNoShell() async throws {
        let title = Self.hostileTitle.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" },
              "hooks": { "beforePlaying": \(recorder("beforePlaying")), "afterPlaying": \(recorder("afterPlaying")), "idle": \(recorder("idle")) },
              "clips": [ { "file": "water.wav", "title": "\(title)" } ] }
            """)
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            let played = try await DaemonProcess.run(["--socket", socket, "play", "water"], tool: "jukebox")
            #expect(played.status == 0)
            #expect(await log.waitFor("hook idle ran"))
        }
        let lines = try String(decoding: folder.read("hooks.log"), as: UTF8.self).split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        #expect(lines.map { $0.first ?? "" } == ["beforePlaying", "afterPlaying", "idle"], "\(lines)")
        let before = try #require(lines.first)
        #expect(before.count == 7)
        #expect(before[1] == "water" && before[2] == Self.hostileTitle && before[3] == "1" && before[4] == UserName.name(of: getuid()), "\(before)")
        #expect(before[6] == "none" || before[6] == "0", "no sound before beforePlaying: \(before[6]) bytes")
        let after = try #require(lines.dropFirst().first)
        #expect(after[5] == "completed" && Int(after[6]) == 8000, "the whole clip was written before afterPlaying: \(after)")
        for name in ["pwned", "pwned2", "pwned3"] { #expect(!FileManager.default.fileExists(atPath: folder.file(name)) && !FileManager.default.fileExists(atPath: name)) }
    }

    @Test func aFailingOrHangingHookIsLoggedAndPlaybackGoesOn() async throws {
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" },
              "hooks": { "beforePlaying": ["/bin/sh", "-c", "echo amplifier not found >&2; exit 3"], "afterPlaying": ["/bin/sleep", "30"], "timeLimit": "300ms" },
              "clips": [ { "file": "water.wav" } ] }
            """)
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            let played = try await DaemonProcess.run(["--socket", socket, "play", "water", "water"], tool: "jukebox")
            #expect(played.status == 0)
            #expect(await log.waitUntil { $0.filter { $0.contains("hook afterPlaying took longer than 0.3s and was stopped") }.count == 2 })
        }
        let lines = run.lines
        #expect(lines.contains { $0.contains("hook beforePlaying failed with status 3: amplifier not found; playback goes on") })
        #expect(lines.filter { $0.contains("played water") }.count == 2, "both played")
        #expect(try folder.read("out.raw").count == 16000)
    }

    /// A hook's background child outlives the hook and is adopted by the daemon; when it ends
    /// it is reaped then (on SIGCHLD), not left a zombie until the daemon next runs a program.
    @Test func aHooksBackgroundChildIsReapedWhenItEnds() async throws {
        let pidFile = folder.file("background.pid")
        let hook = try String(decoding: JSONEncoder().encode(["/bin/sh", "-c", "(sh -c 'echo $$ > \(pidFile); exec sleep 1' &)"]), as: UTF8.self)
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "hooks": { "afterPlaying": \(hook) }, "clips": [ { "file": "water.wav" } ] }
            """)
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [folder] log in
            #expect(try await DaemonProcess.run(["--socket", socket, "play", "water"], tool: "jukebox").status == 0)
            #expect(await log.waitFor("played water"))
            var pid: pid_t?
            for _ in 0..<100 where pid == nil {
                pid = (try? folder.read("background.pid")).flatMap { pid_t(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
                if pid == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            let child = try #require(pid, "the hook's child wrote its pid")
            // It sleeps a second, then ends: within 5 s of that it must be gone from /proc,
            // and no program is started meanwhile.
            for _ in 0..<60 {
                guard FileManager.default.fileExists(atPath: "/proc/\(child)") else { return true }
                try await Task.sleep(for: .milliseconds(100))
            }
            let state = (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8)) ?? ""
            Issue.record("process \(child) is still there: \(state)")
            kill(child, SIGKILL)
            return false
        }
        #expect(run.result)
        #expect(run.status == 0)
    }

    /// A hook's helper that left its process group (`setsid`), or whose parent exited, used to
    /// outlive the hook's time limit. Everything the hook started now ends at the limit, and
    /// nothing is left a zombie.
    @Test func everythingAHookStartedEndsAtItsTimeLimitEvenOutsideItsGroup() async throws {
        let (inGroup, ownSession, orphaned) = (folder.file("in-group.pid"), folder.file("own-session.pid"), folder.file("orphaned.pid"))
        // A child in the hook's group; one in a session of its own; and one in a session of its
        // own whose parent exits at once (the daemon adopts it).
        let script = """
            sh -c 'echo $$ > \(inGroup); exec sleep 600' &
            setsid sh -c 'echo $$ > \(ownSession); exec sleep 600' &
            (setsid sh -c 'echo $$ > \(orphaned); exec sleep 600' &)
            while [ ! -s \(inGroup) ] || [ ! -s \(ownSession) ] || [ ! -s \(orphaned) ]; do sleep 0.05; done
            echo ready; exec sleep 600
            """
        let hook = try String(decoding: JSONEncoder().encode(["/bin/sh", "-c", script]), as: UTF8.self)
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "hooks": { "beforePlaying": \(hook), "timeLimit": "3s" }, "clips": [ { "file": "water.wav" } ] }
            """)
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [folder] log in
            #expect(try await DaemonProcess.run(["--socket", socket, "play", "water"], tool: "jukebox").status == 0)
            #expect(await log.waitFor("hook beforePlaying took longer than 3s and was stopped"))
            #expect(await log.waitFor("played water"))
            let pids = try [inGroup, ownSession, orphaned].map { path -> pid_t in
                try #require(pid_t(String(decoding: folder.read(String(path.dropFirst(folder.path.count + 1))), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)), "\(path)")
            }
            // Gone, not even a zombie: /proc has no entry for any of them.
            return pids.map { (pid: $0, left: FileManager.default.fileExists(atPath: "/proc/\($0)")) }
        }
        for (pid, left) in run.result {
            #expect(!left, "process \(pid) outlived the hook's time limit")
            if left { kill(pid, SIGKILL) }
        }
        #expect(run.status == 0)
    }

    @Test func hooksThatAreNotArgumentListsAreRefusedByName() async throws {
        try folder.write("s.json", text: """
            { "hooks": { "beforePlaying": "gpioset gpiochip0 17=1", "idle": [], "afterPlaying": ["ok", ""], "timeLimit": "2m" },
              "clips": [ { "file": "water.wav" } ] }
            """)
        let checked = try await DaemonProcess.run([folder.file("s.json"), "--check"], tool: "jukeboxd")
        #expect(checked.status == 65)
        for problem in ["hooks.beforePlaying: \"gpioset gpiochip0 17=1\" is not a list of 1 to 64 words", "hooks.idle: is empty: give 1 to 64 words, the program first",
                        "hooks.afterPlaying[1]", "hooks.timeLimit: \"2m\" is out of range (100ms to 60s)"] {
            #expect(checked.stderr.contains(problem) || checked.stdout.contains(problem), "\(problem): \(checked.stderr)")
        }
    }
}
