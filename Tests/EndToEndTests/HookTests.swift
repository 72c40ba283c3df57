import Foundation
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
        #expect(before[1] == "water" && before[2] == Self.hostileTitle && before[3] == "1" && before[4] == "client 1", "\(before)")
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

    @Test func hooksThatAreNotArgumentListsAreRefusedByName() async throws {
        try folder.write("s.json", text: """
            { "hooks": { "beforePlaying": "gpioset gpiochip0 17=1", "idle": [], "afterPlaying": ["ok", ""], "timeLimit": "2m" },
              "clips": [ { "file": "water.wav" } ] }
            """)
        let checked = try await DaemonProcess.run([folder.file("s.json"), "--check"], tool: "jukeboxd")
        #expect(checked.status == 65)
        for problem in ["hooks.beforePlaying: \"gpioset gpiochip0 17=1\" is not a list of 1 to 64 words", "hooks.idle: is empty (give the program and its arguments",
                        "hooks.afterPlaying[1]", "hooks.timeLimit: \"2m\" is out of range (100ms to 60s)"] {
            #expect(checked.stderr.contains(problem) || checked.stdout.contains(problem), "\(problem): \(checked.stderr)")
        }
    }
}
