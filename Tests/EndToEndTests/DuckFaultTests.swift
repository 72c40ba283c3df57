import Foundation
import JukeboxTestSupport
import Testing

/// Debian's MPD ducked by the built daemon while someone sets MPD's volume part-way through a
/// ramp: the level they set is kept, and nothing moves it after. MPD plays a tone to its null
/// output; the clip plays to `null`, so the lowering (attack) is followed at once by the
/// raising (release). Each ramp lasts 4 s, far longer than the test needs to step in.
@Suite("Ducking: a level set mid-ramp", .timeLimit(.minutes(1)))
struct DuckFaultTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0.2, count: 8000), encoding: .s16, rate: 8000, channels: 1))
    }

    /// Polls MPD's volume (every 20 ms, for up to 20 s) until `condition` holds.
    func mpdVolume(_ mpd: MPDServer, until condition: (Int) -> Bool) async throws -> Int? {
        for _ in 0..<1000 {
            if let volume = try await mpd.status()["volume"].flatMap(Int.init), condition(volume) { return volume }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    @Test(.enabled(if: MPDServer.isInstalled, Comment(rawValue: MPDServer.missing)), arguments: [true, false])
    func aVolumeSetDuringARampIsKept(lowering: Bool) async throws {
        let mpd = try MPDServer(device: nil)
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "duck": { "mpd": ["\(mpd.socket)"], "level": 0.25, "attack": "4s", "release": "4s" },
              "clips": [ { "file": "a.wav" } ] }
            """)
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"]
        let theirs = lowering ? 95 : 10
        try await mpd.run { _ in
            let tone = WAVFile.tone(frequency: 200, frames: 44_100 * 60, rate: 44_100, channels: 2)
            _ = try mpd.folder.write("music/music.wav", WAVFile.bytes(tone, encoding: .s16, rate: 44_100, channels: 2))
            _ = try await mpd.command(["update", "idle database"])
            _ = try await mpd.command(["add music.wav", "play", "setvol 80"])
            #expect(try await mpdVolume(mpd) { $0 == 80 } == 80, "MPD plays at 80")
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                #expect(try await jukebox("play", "a").status == 0)
                // Part-way down (under 70), or part-way back up (down at 20 first, then over 30).
                if !lowering { #expect(try await mpdVolume(mpd) { $0 == 20 } == 20, "lowered to 20") }
                let seen = try await mpdVolume(mpd) { lowering ? $0 < 70 : $0 > 30 && $0 < 70 }
                #expect(seen != nil, "the ramp was never seen under way")
                _ = try await mpd.command(["setvol \(theirs)"])
                let phase = lowering ? "lowering" : "raising"
                #expect(await log.waitFor("was set to \(theirs) while jukeboxd was \(phase) it; it is left there"))
                #expect(await log.waitFor("played a"))
                // Once the rest of the ramps would have ended, nothing has moved it.
                try await Task.sleep(for: .seconds(lowering ? 5 : 1))
                return try await mpd.status()["volume"]
            }
            #expect(run.result == "\(theirs)", "MPD at \(run.result ?? "?"), not \(theirs)")
            #expect(run.status == 0)
        }
    }
}
