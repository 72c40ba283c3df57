import Foundation
import JukeboxTestSupport
import Testing

/// Debian's MPD while an alert is on: lowered to silence (not to the duck's level) from the
/// first sounding, kept silent between soundings, and put back where it was once the alert
/// ends. MPD plays a tone to its null output; the alert's clip plays to `null`.
@Suite("Alerts: the other players silenced", .timeLimit(.minutes(1)))
struct AlertDuckTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("alarm.wav", WAVFile.bytes(Array(repeating: 0.2, count: 4000), encoding: .s16, rate: 8000, channels: 1))
        try folder.write("bell.wav", WAVFile.bytes(Array(repeating: 0.2, count: 24_000), encoding: .s16, rate: 8000, channels: 1))
    }

    @Test(.enabled(if: MPDServer.isInstalled, Comment(rawValue: MPDServer.missing)))
    func mpdIsSilentWhileAnAlertIsOnAndPutBackAfter() async throws {
        let mpd = try MPDServer(device: nil)
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "duck": { "mpd": ["\(mpd.socket)"], "level": 0.25, "attack": "200ms", "release": "200ms" },
              "alerts": { "lockdown": { "clip": "alarm", "every": "1h" } },
              "clips": [ { "file": "bell.wav" }, { "file": "alarm.wav", "enabled": false } ] }
            """)
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"]
        try await mpd.run { _ in
            try await mpd.playTone(seconds: 60, volume: 80)
            #expect(try await mpd.volume { $0 == 80 } == 80, "MPD plays at 80")
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                // A clip lowers MPD to its level; an alert cutting in takes it on down to silence.
                #expect(try await jukebox("play", "bell").status == 0)
                #expect(try await mpd.volume { $0 == 20 } == 20, "lowered to the duck's level for the bell")
                #expect(try await jukebox("alert", "lockdown").status == 0)
                #expect(try await mpd.volume { $0 == 0 } == 0, "silent for the alert")
                // Between soundings (an hour apart) it stays silent.
                var asked = 0
                while try await !jukebox("status").stdout.contains("playing:   nothing"), asked < 200 {
                    asked += 1
                    try await Task.sleep(for: .milliseconds(25))
                }
                #expect(asked < 200, "the sounding ended")
                try await Task.sleep(for: .milliseconds(500))
                #expect(try await mpd.status()["volume"] == "0", "still silent between soundings")
                let saved = try String(contentsOfFile: folder.file("state.json"), encoding: .utf8)
                #expect(saved.contains(#""lowered":0"#) && saved.contains(#""volume":80"#), "the level to go back to is on disk: \(saved)")
                #expect(try await jukebox("alert", "off").status == 0)
                #expect(try await mpd.volume { $0 == 80 } == 80, "put back once it ends")
                #expect(await log.waitFor("played bell"), "the bell it cut went on after the alert")
            }
            #expect(run.status == 0)
        }
    }
}
