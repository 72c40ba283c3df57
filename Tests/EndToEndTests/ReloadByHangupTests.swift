import Foundation
import JukeboxTestSupport
import Testing

/// SIGHUP re-reads the session; a session file with mistakes is refused with a log line for
/// each, never one line with the line breaks written out as `\n`.
@Suite("Reload by SIGHUP", .timeLimit(.minutes(1)))
struct ReloadByHangupTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }
    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0.2, count: 800), encoding: .s16, rate: 8000, channels: 1))
        try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#)
    }

    @Test func aSessionWithMistakesIsRefusedWithALogLineForEach() async throws {
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            try folder.write("s.json", text: #"{ "interval": { "min": "soon", "max": "1h" }, "volume": 7, "clips": [ { "file": "a.wav" } ] }"#)
            let hangup = try TestProcesses.spawn("/usr/bin/pkill", ["-HUP", "-f", "jukeboxd \(folder.file("s.json"))"])
            #expect(TestProcesses.wait(hangup) == 0, "the daemon was sent SIGHUP")
            #expect(await log.waitFor("SIGHUP: the session file was not reloaded; the running session is unchanged (2 problems follow)"))
            #expect(await log.waitUntil { $0.filter { $0.contains("SIGHUP: \(folder.file("s.json")):1: ") }.count == 2 })
            #expect(await log.lines.allSatisfy { !$0.contains("\\n") }, "no line break written out")
            // The running session is unchanged: it still plays.
            #expect(try await jukebox("play", "a").status == 0)
        }
    }
}
