import Foundation
import JukeboxCore
import JukeboxProtocol
import Subprocess
import JukeboxTestSupport
import Testing

/// The built `jukebox` client against the built `jukeboxd`: output, `--json`, exit codes.
@Suite("jukebox client end to end", .timeLimit(.minutes(1)))
struct JukeboxClientTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("control.sock") }
    var sessionPath: String { folder.file("session.json") }

    init() throws {
        folder = try TemporaryDirectory()
        for (id, frequency) in [("ward", 300.0), ("water", 500.0), ("walk", 700.0)] {
            try folder.write("\(id).wav", WAVFile.bytes(WAVFile.tone(frequency: frequency, frames: 4410, rate: 44_100, channels: 1), encoding: .s16, rate: 44_100, channels: 1))
        }
        try folder.write("session.json", text: #"{ "name": "Drill", "interval": { "min": "1h", "max": "2h" }, "clips": [ { "file": "ward.wav" }, { "file": "water.wav" }, { "file": "walk.wav" } ] }"#)
    }

    var daemonArguments: [String] {
        [sessionPath, "--socket", socket, "--state", folder.file("state.json"), "--device", "file:FILE=\(folder.file("out.raw")),FORMAT=raw"]
    }

    /// `jukebox next` shows what will happen, and `jukebox quiet` changes it: the built
    /// binaries, with a session that has fixed times, quiet hours and a location.
    @Test func nextShowsFixedTimesQuietHoursAndTheSun() async throws {
        try folder.write("session.json", text: #"""
            { "interval": { "min": "1h", "max": "2h" }, "location": { "latitude": 52.37, "longitude": 4.89 },
              "quiet": [ { "from": "22:00", "to": "07:00" } ],
              "clips": [ { "file": "ward.wav", "at": ["*:00"] }, { "file": "water.wav", "title": "Bell", "at": ["07:55"] }, { "file": "walk.wav" } ] }
            """#)
        let run = try await DaemonProcess.withDaemon(daemonArguments, ready: "control socket listening", environment: ["TZ": "UTC"]) { [self] _ in
            let next = try await jukebox("next", "-n", "30")
            #expect(next.status == 0, "\(next.stderr)")
            #expect(next.stdout.hasPrefix("fixed times:\n  "), "\(next.stdout)")
            #expect(next.stdout.contains("  ward (skipped: quiet)\n"), "an hourly chime in the night: \(next.stdout)")
            #expect(next.stdout.contains("water \"Bell\""), "\(next.stdout)")
            #expect(next.stdout.contains("\nquiet hours: "), "\(next.stdout)")
            #expect(next.stdout.contains("\nsun at 52.37,4.89 today: dawn "), "\(next.stdout)")
            let quiet = try await jukebox("quiet", "for", "2h")
            #expect(quiet.stdout.hasPrefix("quiet by hand until "), "\(quiet.stdout)")
            #expect(try await jukebox("status").stdout.contains("\nquiet:     quiet by hand until "))
            let held = try await jukebox("next").stdout
            #expect(held.contains("(skipped: quiet)"), "the next pick, within the two hours, says why it is skipped: \(held)")
            let json = try JSONDecoder().decode(NextResult.self, from: Data(try await jukebox("--json", "next").stdout.utf8))
            let until = try #require(json.quiet.until)
            #expect(json.quiet.quiet && json.quiet.byHand)
            #expect(json.fixedTimes.filter { $0.at < until }.allSatisfy { $0.quiet == true }, "every time in the next two hours is skipped")
            #expect(json.fixedTimes.count == 10)
            #expect(try await jukebox("quiet", "for", "30").stderr.contains("quiet lasts from 1m to 168h, not 30s"))
            #expect(try await jukebox("quiet", "sometimes").status == 64)
            return try await jukebox("quiet", "off").stdout
        }
        #expect(run.result.hasPrefix("not quiet") || run.result.hasPrefix("quiet hours lifted by hand"), "\(run.result)")
    }

    /// A change of the system's time zone (`/etc/localtime`, as `timedatectl set-timezone`
    /// leaves it) is followed without a restart. jukeboxd runs in a mount namespace of its
    /// own, with a file of the test's bound over `/etc/localtime`, and the test rewrites it.
    @Test(.enabled(if: getuid() == 0, "a mount namespace of its own needs root (CI runs as root)"))
    func aChangeOfTheSystemZoneIsFollowedWithoutARestart() async throws {
        let zone = folder.file("localtime")
        try folder.write("localtime", Array(try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Etc/UTC"))))
        try folder.write("session.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "ward.wav", "at": ["12:00"] } ] }"#)
        let wrapper = ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", #"unset TZ; mount --bind "$0" /etc/localtime && exec "$@""#, zone]
        let run = try await DaemonProcess.withDaemon(daemonArguments, ready: "control socket listening", wrapper: wrapper) { [self] _ in
            func dueSecondOfDay() async throws -> Int64? {
                let next = try JSONDecoder().decode(NextResult.self, from: Data(try await jukebox("--json", "next").stdout.utf8))
                return next.fixedTimes.first.map { Int64($0.at) % 86_400 }
            }
            #expect(try await dueSecondOfDay() == 12 * 3600, "12:00 in UTC")
            // Rewritten in place, as Pakistan's time (UTC+5, no daylight saving), with a new
            // modification time: the C library looks at the file's inode and time.
            let karachi = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Asia/Karachi"))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: zone))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: karachi)
            try handle.close()
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 3600)], ofItemAtPath: zone)
            // Looked at again within five seconds.
            let deadline = ContinuousClock.now + .seconds(15)
            var due = try await dueSecondOfDay()
            while due != 7 * 3600, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                due = try await dueSecondOfDay()
            }
            return due
        }
        let due: Int64? = run.result
        #expect(due == 25_200, "12:00 in Karachi is 07:00 UTC: \(run.lines.suffix(5))")
    }

    @Test func notRunningExits69WithAClearMessage() async throws {
        let outcome = try await jukebox("status")
        #expect(outcome.status == 69)
        #expect(outcome.stderr == "jukebox: cannot reach jukeboxd at \(socket): no such socket (is it running?)\n")
    }

    @Test func badArgumentsExit64() async throws {
        #expect(try await jukebox("volume", "300").status == 64)
        #expect(try await jukebox("play").status == 64)
        #expect(try await jukebox("dance").status == 64)
    }

    /// Argumentless commands and `play CLIP…` skip ArgumentParser when the line holds nothing
    /// else but the shared options; anything more must still get ArgumentParser's usage
    /// errors and help.
    @Test func quickCommandsParseAsArgumentParserDoes() async throws {
        for line in [["status", "extra"], ["status", "--socket"], ["status", "skip"], ["status", "--socket", "--json"],
                     ["play"], ["play", "--cue"], ["play", "ward", "--loud"], ["status", "play", "ward"],
                     ["play", "ward", "--client"], ["play", "ward", "--client", ""]] {
            let outcome = try await DaemonProcess.run(line, tool: "jukebox")
            #expect(outcome.status == 64, "\(line): \(outcome.stderr)")
            #expect(outcome.stderr.contains("Usage: jukebox"), "\(line): \(outcome.stderr)")
        }
        let help = try await jukebox("status", "--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: jukebox status"), "\(help.stdout)")
        for line in [["--socket=\(socket)", "--json", "skip"], ["pause", "--socket", socket], ["--socket", socket, "queue", "--json"],
                     ["play", "ward", "--socket", socket, "status", "--cue"]] {
            let outcome = try await DaemonProcess.run(line, tool: "jukebox")
            #expect(outcome.status == 69, "\(line)")
            #expect(outcome.stderr == "jukebox: cannot reach jukeboxd at \(socket): no such socket (is it running?)\n")
        }
    }

    @Test func playQueueStatusAndErrorsThroughTheRealDaemon() async throws {
        let run = try await DaemonProcess.withDaemon(daemonArguments, ready: "control socket listening") { [self] log in
            var results: [String: DaemonProcess.Outcome] = [:]
            try await self.pause()
            results["play"] = try await jukebox("play", "ward", "water")
            results["playJSON"] = try await jukebox("--json", "play", "walk")
            results["named"] = try await jukebox("play", "--client", "kitchen", "ward")
            results["namedSlow"] = try await jukebox("play", "ward", "--client", "hall", "--client", "hall")
            results["unknown"] = try await jukebox("play", "wlak")
            results["outside"] = try await jukebox("play", "../session.json")
            results["queue"] = try await jukebox("queue")
            results["status"] = try await jukebox("status", "--json")
            results["remove"] = try await jukebox("remove", "2", "99")
            results["volume"] = try await jukebox("volume", "40")
            results["clips"] = try await jukebox("clips")
            return results
        }
        #expect(run.status == 0)
        let r = run.result
        #expect(r["play"]?.status == 0)
        #expect(r["play"]?.stdout == "queued 1 ward (position 1)\nqueued 2 water (position 2)\n")
        #expect(r["playJSON"]?.stdout.hasPrefix(#"{"entries":[{"clip":"walk","file":"walk.wav","origin":"\#(UserName.name(of: getuid()))""#) == true, "\(r["playJSON"]?.stdout ?? "")")
        #expect(r["unknown"]?.status == 1)
        #expect(r["unknown"]?.stderr == "jukebox: no clip \"wlak\" in the session (did you mean \"walk\"?)\n")
        #expect(r["outside"]?.status == 1)
        #expect(r["outside"]?.stderr.contains("outside the session's clips folder") == true)
        #expect(r["queue"]?.stdout.contains("1. 1 ward (by \(UserName.name(of: getuid())))") == true, "\(r["queue"]?.stdout ?? "")")
        #expect(r["queue"]?.stdout.contains("3. 3 walk (by \(UserName.name(of: getuid())))") == true)
        // Named by --client, through the fast path and through ArgumentParser alike.
        #expect(r["queue"]?.stdout.contains("4. 4 ward (by kitchen)") == true, "\(r["queue"]?.stdout ?? "")")
        #expect(r["queue"]?.stdout.contains("5. 5 ward (by hall)") == true, "\(r["queue"]?.stdout ?? "")")
        let status = try JSONSerialization.jsonObject(with: Data((r["status"]?.stdout ?? "").utf8)) as? [String: Any]
        #expect(status?["session"] as? String == "Drill")
        #expect(status?["version"] as? String == JukeboxVersion.current, "the daemon's version")
        #expect(status?["queueLength"] as? Int == 5)
        #expect(status?["paused"] as? Bool == true)
        #expect(r["remove"]?.status == 1)
        #expect(r["remove"]?.stdout == "removed 2\n")
        #expect(r["remove"]?.stderr == "jukebox: not waiting (already played, playing or unknown): 99\n")
        #expect(r["volume"]?.stdout == "volume 40\n")
        #expect(r["clips"]?.stdout.split(separator: "\n").map { String($0.prefix { $0 != " " }) } == ["ward", "water", "walk"])
        let clipLines = (r["clips"]?.stdout ?? "").split(separator: "\n")
        #expect(clipLines.first?.split(separator: " ").prefix(7) == ["ward", "\"ward\"", "0:00", "window", "open", "played", "0×"], "\(clipLines)")
        // In columns: each line's title starts at the same place.
        #expect(Set(clipLines.map { line in line.firstIndex(of: "\"").map { line.distance(from: line.startIndex, to: $0) } ?? -1 }).count == 1, "\(clipLines)")
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket file is removed on exit")
    }

    func pause() async throws {
        let outcome = try await jukebox("pause")
        #expect(outcome.stdout == "paused\n")
    }

    @Test func playedClipsReachTheDeviceWhole() async throws {
        let run = try await DaemonProcess.withDaemon(daemonArguments, ready: "control socket listening") { [self] log in
            let played = try await jukebox("play", "walk", "ward")
            #expect(played.status == 0)
            await log.waitFor("played ward")
            return try await jukebox("history").stdout
        }
        #expect(run.status == 0)
        #expect(run.result.hasSuffix("  walk  completed\n"))
        #expect(run.result.split(separator: "\n").count == 2)
        #expect(run.lines.contains { $0.contains("played walk (walk.wav, 0.1s)") })
        let expected = ["walk", "ward"].flatMap { id in
            WAVFile.pcm16(WAVFile.tone(frequency: id == "walk" ? 700 : 300, frames: 4410, rate: 44_100, channels: 1))
        }
        #expect(try folder.read("out.raw") == expected)
    }

    @Test func queueLimitRefusesMoreAndKeepsWhatWasAcceptedAcrossARestart() async throws {
        let first = try await DaemonProcess.withDaemon(daemonArguments + ["--queue-limit", "3"], ready: "control socket listening") { [self] _ in
            try await self.pause()
            let two = try await jukebox("play", "ward", "water")
            let tooMany = try await jukebox("play", "walk", "ward")
            let third = try await jukebox("play", "walk")
            let fourth = try await jukebox("play", "ward")
            return [two, tooMany, third, fourth]
        }
        #expect(first.result.map(\.status) == [0, 1, 0, 1])
        #expect(first.result[1].stderr == "jukebox: the queue is full (3 clips waiting); try again later or clear it\n")
        // Restarted with a lower limit, every accepted clip is still waiting, in order.
        let second = try await DaemonProcess.withDaemon(daemonArguments + ["--queue-limit", "1"], ready: "control socket listening") { [self] _ in
            try await jukebox("queue").stdout
        }
        #expect(second.result.split(separator: "\n").map { $0.split(separator: " ").prefix(3).joined(separator: " ") } == ["nothing playing", "1. 1 ward", "2. 2 water", "3. 3 walk"], "\(second.result)")
        let bad = try await DaemonProcess.run(daemonArguments + ["--queue-limit", "0"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--queue-limit takes a number from 1 to 1000000"), "\(bad.stderr)")
    }

    @Test func reloadKeepsTheOldSessionWhenTheNewOneIsInvalid() async throws {
        let run = try await DaemonProcess.withDaemon(daemonArguments, ready: "control socket listening") { [self] log in
            try await self.pause()
            _ = try await jukebox("play", "water", "ward", "water")
            try folder.write("session.json", text: #"{ "name": "Drill", "volume": 7, "clips": [ { "file": "ward.wav" } ] }"#)
            let bad = try await jukebox("reload")
            try folder.write("session.json", text: #"{ "name": "Drill 2", "clips": [ { "file": "ward.wav" }, { "file": "walk.wav" } ] }"#)
            let good = try await jukebox("reload")
            let status = try await jukebox("status")
            let queue = try await jukebox("queue")
            return [bad, good, status, queue]
        }
        let (bad, good, status, queue) = (run.result[0], run.result[1], run.result[2], run.result[3])
        // Each shown as queued by the user who ran `jukebox`, not by a connection's number.
        let me = UserName.name(of: getuid())
        #expect(queue.stdout.hasSuffix("  1. 1 water (by \(me))\n  2. 2 ward (by \(me))\n  3. 3 water (by \(me))\n"), "entries of clips the new session lacks keep their place: \(queue.stdout)")
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("the session file was not reloaded"))
        #expect(bad.stderr.contains("session.json:1: volume: 7 is out of range (expected 0 to 1, or a list of steps such as [{\"from\": \"07:00\", \"level\": 0.8}])"))
        #expect(good.stdout == "reloaded \"Drill 2\": 2 clips\n")
        #expect(status.stdout.hasPrefix("session:   Drill 2\n"))
    }

    /// A reload that names another device opens it first: one that is not there is refused
    /// with the name meant, and the running session plays on through its own; a device that
    /// is there is taken, and used from the next clip.
    @Test func reloadRefusesADeviceThatIsNotThere() async throws {
        try folder.write("asound.conf", text: #"pcm.desk_speaker { type file slave.pcm { type null } file "\#(folder.file("out.raw"))" format "raw" hint { show on description "Desk" } }"#)
        // A home of the test's own: ALSA reads ~/.asoundrc from it (through a hook of its own
        // configuration, which it does not read again by itself when the file changes).
        let environment = ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + folder.file("asound.conf"), "HOME": folder.path, "XDG_CONFIG_HOME": folder.file("config")]
        @Sendable func use(_ device: String) throws {
            try folder.write("session.json", text: "{\n  \"name\": \"Drill\",\n  \"device\": \"\(device)\",\n  \"interval\": { \"min\": \"1h\", \"max\": \"2h\" },\n  \"clips\": [ { \"file\": \"ward.wav\" } ]\n}\n")
        }
        try use("desk_speaker")
        let arguments = [sessionPath, "--socket", socket, "--state", folder.file("state.json")]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: environment) { [self] log in
            // A card by number that is not there, then a name misspelt.
            try use("hw:7")
            let byNumber = try await jukebox("reload")
            #expect(byNumber.status != 0 && byNumber.stderr.contains(#"device: audio device "hw:7" is not there (the devices here are "#), "\(byNumber.stderr)")
            try use("desk_speker")
            let refused = try await jukebox("reload")
            #expect(try await jukebox("play", "ward").status == 0)
            #expect(await log.waitFor("played ward"), "the running session plays on through its own device")
            // A device added to ~/.asoundrc while the daemon runs is found by the reload's check.
            try folder.write(".asoundrc", text: "pcm.porch { type null }\n")
            try use("porch")
            let added = try await jukebox("reload")
            #expect(added.status == 0, "a device added since the daemon started: \(added.stderr)")
            try use("null")
            let taken = try await jukebox("reload")
            return (refused, taken, try await jukebox("status").stdout)
        }
        let (refused, taken, status) = run.result
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("the session file was not reloaded"), "\(refused.stderr)")
        #expect(refused.stderr.contains("session.json:3: device: audio device \"desk_speker\" is not there (did you mean desk_speaker? the devices here are "), "\(refused.stderr)")
        #expect(taken.status == 0, "\(taken.stderr)")
        #expect(status.contains("device:    null"), "\(status)")
        #expect(try folder.read("out.raw").count == 4410 * 2, "ward played whole through desk_speaker")
    }

    /// The CLI's rough edges a new user met: a misspelt command is answered with the one
    /// meant; `volume -5` lowers by 5 (it was "Unknown option"); a path typed from where the
    /// user stands plays the file it names (it was taken from the clips folder); `--socket`
    /// naming a file says so (it was "connection refused").
    @Test func theCLIAnswersWhatANewUserTypes() async throws {
        let misspelt = try await jukebox("skp")
        #expect(misspelt.status == 64)
        #expect(misspelt.stderr == "jukebox: there is no command \"skp\"; did you mean skip? (`jukebox --help` lists them)\n", "\(misspelt.stderr)")
        #expect(try await jukebox("statu").stderr.contains("did you mean status?"), "the quick path's near miss too")
        let nothing = try await jukebox("xyzzy")
        #expect(nothing.status == 64 && nothing.stderr == "jukebox: there is no command \"xyzzy\" (`jukebox --help` lists them)\n", "\(nothing.stderr)")
        let file = try await DaemonProcess.run(["--socket", sessionPath, "status"], tool: "jukebox")
        #expect(file.status == 69)
        #expect(file.stderr.contains("\(sessionPath): it is a file, not a socket: give --socket the path jukeboxd logs as"), "\(file.stderr)")
        for bad in ["101", "+101", "-x", "5%", "--5", "+-5", "+"] {
            let refused = try await jukebox("volume", bad)
            #expect(refused.status == 64, "\(bad)")
            #expect(refused.stderr.contains("the volume is a whole number from 0 to 100, or a change such as +5 or -5, not \"\(bad)\""), "\(refused.stderr)")
        }
        mkdir(folder.file("clips"), 0o755)
        try folder.write("clips/bell.wav", try folder.read("water.wav"))
        try folder.write("session.json", text: #"{ "name": "Drill", "clipsDirectory": "clips", "interval": { "min": "1h", "max": "2h" }, "clips": [ { "file": "bell.wav" } ] }"#)
        let run = try await DaemonProcess.withDaemon(daemonArguments, ready: "control socket listening") { [self] log in
            #expect(try await jukebox("volume", "50").stdout == "volume 50\n")
            let lower = try await jukebox("volume", "-5")
            #expect(lower.status == 0 && lower.stdout == "volume 45\n", "\(lower.stderr)")
            #expect(try await jukebox("volume", "+70").stdout == "volume 100\n", "held to 100")
            #expect(try await jukebox("volume", "-0").stdout == "volume 100\n")
            try await self.pause()
            // From the session's folder, as the README's user stands in the project's.
            let typed = try await DaemonProcess.run(["--socket", socket, "play", "clips/bell.wav"], tool: "jukebox", in: folder.path)
            #expect(typed.status == 0, "\(typed.stderr)")
            #expect(typed.stdout.hasPrefix("queued 1 bell (position 1)"), "the session's clip, found by its path: \(typed.stdout)")
            // A path from here to a file outside the clips folder is refused as such.
            let outside = try await DaemonProcess.run(["--socket", socket, "play", "./water.wav"], tool: "jukebox", in: folder.path)
            #expect(outside.status != 0)
            #expect(outside.stderr.contains("outside"), "\(outside.stderr)")
            return try await jukebox("queue").stdout
        }
        #expect(run.result.contains("1. 1 bell (by \(UserName.name(of: getuid())))"), "\(run.result)")
    }

    /// A group the daemon may hand its socket to other than the test's own: any group when
    /// running as root (as CI does), else one of the user's supplementary groups.
    static func otherGroup() -> (name: String, id: gid_t)? {
        var ids = Array(repeating: gid_t(0), count: 256)
        let count = getgroups(Int32(ids.count), &ids)
        let candidates: [gid_t] = getuid() == 0 ? [29, 65534, 100] : Array(ids.prefix(Int(max(count, 0))))
        for id in candidates where id != getgid() {
            if let entry = getgrgid(id) { return (String(cString: entry.pointee.gr_name), id) }
        }
        return nil
    }

    @Test(.enabled(if: otherGroup() != nil, "no second group to give the socket to"))
    func socketGroupGetsTheSocketAndNobodyElse() async throws {
        let group = try #require(Self.otherGroup())
        let run = try await DaemonProcess.withDaemon(daemonArguments + ["--socket-group", group.name], ready: "control socket listening") { [self] _ in
            var info = stat()
            #expect(stat(socket, &info) == 0)
            return (info.st_gid, info.st_mode & 0o777, try await jukebox("status").status)
        }
        #expect(run.result.0 == group.id)
        #expect(run.result.1 == 0o660, "owner and group may connect, nobody else")
        #expect(run.result.2 == 0)
        let unknown = try await DaemonProcess.run(daemonArguments + ["--socket-group", "no-such-group-here"])
        #expect(unknown.status == 67)
        #expect(unknown.stderr.contains("jukeboxd: --socket-group: no group named \"no-such-group-here\" (see `getent group`)"), "\(unknown.stderr)")
        #expect(!unknown.stderr.contains("restored") && !unknown.stderr.contains("no saved state"), "stops before it touches the state: \(unknown.stderr)")
    }

    @Test func aSecondDaemonOnTheSameSocketExits75AndAStaleSocketIsReplaced() async throws {
        // A socket file left behind by a daemon that died: bound, never listened on.
        let stale = socket
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = UnixSocketAddress(stale)!
        _ = address.withSockaddr { bind(descriptor, $0, $1) }
        close(descriptor)
        #expect(FileManager.default.fileExists(atPath: stale))

        let run = try await DaemonProcess.withDaemon(daemonArguments, ready: "control socket listening") { [self] log in
            let second = try await DaemonProcess.run(daemonArguments)
            return second
        }
        #expect(run.status == 0)
        #expect(run.result.status == 75)
        #expect(run.result.stderr == "jukeboxd: another jukeboxd is already running on \(socket); stop it first, or give this one its own --socket (and its own --state)\n")
    }

    /// Following the message above, a second daemon with a socket of its own used to start on
    /// the same state file, and the two overwrote each other's queue.
    @Test func aSecondDaemonOnTheSameStateFileExits75NamingItAndThePidHoldingIt() async throws {
        let statePath = try #require(daemonArguments.firstIndex(of: "--state").map { daemonArguments[$0 + 1] })
        let run = try await DaemonProcess.withDaemon(daemonArguments, ready: "control socket listening") { [self] _ in
            var second = daemonArguments
            second[second.firstIndex(of: socket)!] = folder.file("other.sock")
            let refused = try await DaemonProcess.run(second)
            // With a state of its own too, it starts.
            second[second.firstIndex(of: statePath)!] = folder.file("other-state.json")
            let own = try await DaemonProcess.withDaemon(second, ready: "control socket listening") { _ in true }
            return (refused, own.status, try String(contentsOfFile: folder.file(".state.json.lock"), encoding: .utf8))
        }
        #expect(run.status == 0)
        let (refused, ownStatus, holder) = run.result
        #expect(refused.status == 75)
        let pid = holder.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Int(pid) != nil, "the lock file holds the pid: \(holder)")
        #expect(refused.stderr == "jukeboxd: the state file \(statePath) is in use by another jukeboxd (pid \(pid)); stop that one first, or give this one its own --state (and its own --socket)\n")
        #expect(ownStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: folder.file("other.sock")), "the refused one left nothing behind")
    }

    @Test func watchPrintsEventsAsTheyHappen() async throws {
        let run = try await DaemonProcess.withDaemon(daemonArguments, ready: "control socket listening") { [self] log in
            try await Subprocess.run(
                .path(.init(DaemonProcess.binaryDirectory + "/jukebox")), arguments: ["--socket", socket, "watch"],
                platformOptions: TestProcesses.options, input: .none, output: .sequence, error: .discarded
            ) { execution in
                var seen: [String] = []
                var asked = false
                for try await line in execution.standardOutput.strings() {
                    seen.append(line)
                    if line == "paused" { try execution.send(signal: .interrupt) }
                    if !asked {
                        asked = true
                        _ = try await jukebox("pause")
                    }
                }
                return seen
            }.closureResult
        }
        #expect(run.status == 0)
        #expect(run.result == ["watching jukeboxd at \(socket) (Ctrl-C stops)", "paused"], "\(run.result)")
    }

    @Test func shutdownIsNotHeldUpByIdleOrSubscribedClients() async throws {
        let run = try await DaemonProcess.withDaemon(daemonArguments, ready: "control socket listening") { [self] _ in
            // One connection that never sends anything, one that follows events.
            let idle = try UnixConnection(path: socket)
            let watcher = try UnixConnection(path: socket)
            watcher.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
            #expect(watcher.readLine() == #"{"id":1,"jsonrpc":"2.0","result":{"subscribed":true}}"#)
            return [idle, watcher]
        }
        #expect(run.status == 0)
        #expect(run.lines.last?.hasSuffix("stopped") == true)
        // Both connections were closed by the daemon, not left hanging.
        for connection in run.result { #expect(connection.readLine() == nil) }
    }
}

/// Connections arriving while the daemon shuts down must never crash it (its exit status
/// would then not be 0). Several daemons at once make the race likely.
@Suite("jukeboxd shutdown with clients connecting", .timeLimit(.minutes(1)))
struct ShutdownRaceTests {
    @Test(arguments: 0..<12)
    func clientsConnectingDuringShutdown(round: Int) async throws {
        let folder = try TemporaryDirectory()
        try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0, count: 100), encoding: .s16, rate: 8000, channels: 1))
        let session = try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#)
        let socket = folder.file("c.sock")
        let run = try await DaemonProcess.withDaemon(
            [session, "--socket", socket, "--state", folder.file("state.json"), "--device", "file:FILE=\(folder.file("o.raw")),FORMAT=raw"],
            ready: "control socket listening"
        ) { _ in
            let watcher = try UnixConnection(path: socket)
            watcher.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
            return [watcher, try UnixConnection(path: socket)]
        }
        #expect(run.status == 0, "\(run.lines.suffix(3))")
    }
}

/// A plain blocking Unix socket, for a test that needs connections that misbehave.
final class UnixConnection: Sendable {
    let descriptor: Int32

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = UnixSocketAddress(path)!
        guard address.withSockaddr({ connect(descriptor, $0, $1) }) == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(descriptor) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// The next line, or nil at the end of the stream.
    func readLine() -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(descriptor, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
    }
}

extension JukeboxClientTests {
    /// `--json` on a refusal used to print nothing on stdout; a script needs the error object.
    @Test func jsonPrintsTheErrorObjectOfARefusal() async throws {
        let run = try await DaemonProcess.withDaemon(daemonArguments, ready: "control socket listening") { [self] _ in
            (try await jukebox("--json", "play", "wlak"), try await jukebox("play", "--json", "wlak", "--client", "kitchen"))
        }
        for outcome in [run.result.0, run.result.1] {
            #expect(outcome.status == 1)
            #expect(outcome.stdout == #"{"code":-32001,"data":{"clip":"wlak","reason":"unknown-clip","suggestions":["walk"]},"message":"no clip \"wlak\" in the session (did you mean \"walk\"?)"}"# + "\n")
            #expect(outcome.stderr == "jukebox: no clip \"wlak\" in the session (did you mean \"walk\"?)\n")
        }
    }

    /// `jukebox` alone used to print help and exit 0; a script that lost its command should see a failure.
    @Test func noCommandIsAUsageError() async throws {
        let outcome = try await DaemonProcess.run([], tool: "jukebox")
        #expect(outcome.status == 64)
        #expect(outcome.stderr.contains("Usage: jukebox"), "\(outcome.stderr)")
    }
}
