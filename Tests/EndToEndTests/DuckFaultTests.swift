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
            try await mpd.playTone(seconds: 60, volume: 80)
            #expect(try await mpd.volume { $0 == 80 } == 80, "MPD plays at 80")
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                #expect(try await jukebox("play", "a").status == 0)
                // Part-way down (under 70), or part-way back up (down at 20 first, then over 30).
                if !lowering { #expect(try await mpd.volume { $0 == 20 } == 20, "lowered to 20") }
                let seen = try await mpd.volume { lowering ? $0 < 70 : $0 > 30 && $0 < 70 }
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

/// Two jukeboxds (two cards, two rooms on one Pi) ducking the same MPD, their clips
/// overlapping: each daemon's afterPlaying hook waits on a FIFO the test writes to, so the
/// music stays lowered for that daemon until the test lets it go. The second takes the level
/// to go back to from the first one's claim on MPD, the one that finishes first leaves the
/// raising to the other, and MPD ends where it was: 80, in either order.
@Suite("Ducking: two jukeboxds on one MPD", .timeLimit(.minutes(1)))
struct SharedDuckTests {
    struct Daemon: DaemonSuite {
        let folder: TemporaryDirectory
        var socket: String { folder.file("c.sock") }
        var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }

        init(mpd: MPDServer) throws {
            folder = try TemporaryDirectory()
            try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0.2, count: 800), encoding: .s16, rate: 8000, channels: 1))
            #expect(mkfifo(folder.file("hold"), 0o600) == 0)
            let hook = #"["/bin/sh", "-c", "cat \#(folder.file("hold")) > /dev/null"]"#
            try folder.write("s.json", text: """
                { "interval": { "min": "1h", "max": "1h" }, "duck": { "mpd": ["\(mpd.socket)"], "level": 0.25, "attack": "0s", "release": "0s" },
                  "hooks": { "afterPlaying": \(hook), "timeLimit": "60s" }, "clips": [ { "file": "a.wav" } ] }
                """)
        }

        /// Lets the clip's afterPlaying hook end: it reads the FIFO until the test has opened
        /// and closed its write end.
        func letGo() async throws {
            for _ in 0..<500 {
                let end = open(folder.file("hold"), O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                if end >= 0 {
                    close(end)
                    return
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            Issue.record("the hook never opened its FIFO")
        }
    }

    /// Which clip's afterPlaying hook the test lets end first.
    enum Ending: String, CaseIterable, Sendable { case firstEndsFirst, secondEndsFirst, together }

    @Test(.enabled(if: MPDServer.isInstalled, Comment(rawValue: MPDServer.missing)), arguments: Ending.allCases)
    func theMusicComesBackWhenTheLastClipEnds(ending: Ending) async throws {
        let mpd = try MPDServer(device: nil)
        let (first, second) = (try Daemon(mpd: mpd), try Daemon(mpd: mpd))
        try await mpd.run { _ in
            try await mpd.playTone(seconds: 60, volume: 80)
            #expect(try await mpd.volume { $0 == 80 } == 80)
            _ = try await DaemonProcess.withDaemon(first.arguments, ready: "control socket listening") { firstLog in
                #expect(try await first.jukebox("play", "a").status == 0)
                #expect(await firstLog.waitFor("played a"))
                #expect(try await mpd.volume { $0 == 20 } == 20, "lowered by the first")
                _ = try await DaemonProcess.withDaemon(second.arguments, ready: "control socket listening") { secondLog in
                    #expect(try await second.jukebox("play", "a").status == 0)
                    #expect(await secondLog.waitFor("is lowered by another jukeboxd too; the level to go back to is the one it keeps, 80"))
                    #expect(await secondLog.waitFor("played a"))
                    #expect(try await claims(on: mpd).count == 2, "each holds its claim while its clip sounds")
                    switch ending {
                    case .firstEndsFirst, .secondEndsFirst:
                        let (early, late, earlyLog) = ending == .firstEndsFirst ? (first, second, firstLog) : (second, first, secondLog)
                        try await early.letGo()
                        #expect(await earlyLog.waitFor("is lowered by another jukeboxd too; it is left for that one to raise"))
                        // Gone from MPD by the time it says so: the other, ending at once, finds none.
                        #expect(try await claims(on: mpd) == [80], "only the other's claim is left")
                        #expect(try await mpd.status()["volume"] == "20", "still low while the other's clip sounds")
                        try await late.letGo()
                    case .together:
                        // Each may look while the other still holds its claim: one must raise.
                        async let firstGoes: Void = first.letGo()
                        async let secondGoes: Void = second.letGo()
                        _ = try await (firstGoes, secondGoes)
                    }
                    #expect(try await mpd.volume { $0 == 80 } == 80, "back at 80 once both are done")
                    #expect(try await claims(on: mpd) { $0.isEmpty } == [], "no claim is left")
                }
            }
            #expect(try await mpd.status()["volume"] == "80")
        }
    }

    /// The levels the claims name once `condition` holds for them (MPD drops a claim when the
    /// daemon's connection holding it ends, a moment after the daemon lets go); nil if never.
    func claims(on mpd: MPDServer, until condition: ([Int]) -> Bool) async throws -> [Int]? {
        for _ in 0..<250 {
            let now = try await claims(on: mpd)
            if condition(now) { return now }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// The levels the jukeboxds' claims on MPD name (its `channels`).
    func claims(on mpd: MPDServer) async throws -> [Int] {
        try await mpd.command(["channels"]).compactMap { line in
            guard line.hasPrefix("channel: jukeboxd.duck.") else { return nil }
            return Int(line.dropFirst("channel: jukeboxd.duck.".count).prefix { $0 != "." })
        }
    }
}
