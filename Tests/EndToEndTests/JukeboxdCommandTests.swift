import Foundation
import JukeboxTestSupport
import Subprocess
import Testing

/// The built `jukeboxd` binary, end to end: arguments, exit codes, messages, and real playback
/// through ALSA's `file` plugin.
@Suite("jukeboxd end to end", .timeLimit(.minutes(1)))
struct JukeboxdCommandTests {
    let folder: TemporaryDirectory
    let tones: [(id: String, samples: [Double])]

    init() throws {
        folder = try TemporaryDirectory()
        tones = [("low", 220, 9000), ("mid", 440, 13_000), ("high", 880, 5000)].map { id, frequency, frames in
            (id, WAVFile.tone(frequency: Double(frequency), frames: frames, rate: 44_100, channels: 2))
        }
        for tone in tones {
            try folder.write("\(tone.id).wav", WAVFile.bytes(tone.samples, encoding: .s16, rate: 44_100, channels: 2))
        }
    }

    func session(_ body: String) throws -> String {
        try folder.write("session.json", text: body)
    }

    var fileDevice: String { "file:FILE=\(folder.file("out.raw")),FORMAT=raw" }
    /// Each test's daemon gets its own control socket, so tests can run side by side.
    var socket: [String] { ["--socket", folder.file("control.sock"), "--state", folder.file("state.json")] }

    func outcome(_ arguments: [String]) async throws -> (Int32?, String, String) {
        let outcome = try await DaemonProcess.run(arguments)
        return (outcome.status, outcome.stdout, outcome.stderr)
    }

    @Test func checkAcceptsAGoodSession() async throws {
        let path = try session(#"{ "name": "Tones", "device": "null", "clips": [ { "file": "low.wav" }, { "file": "mid.wav" } ] }"#)
        let (status, stdout, stderr) = try await outcome([path, "--check"])
        #expect(status == 0, "\(stderr)")
        #expect(stdout == "\(path): OK: \"Tones\", 2 clips (2 enabled), device \"null\"\n")
    }

    @Test func checkSaysWhereTheMediaPlayerListensAndWhetherItIsAnnounced() async throws {
        let key = ESPHomeMediaPlayerTests.key
        let lan = try session(#"{ "name": "Tones", "device": "null", "esphome": { "encryptionKey": "\#(key)", "name": "Desk speaker" }, "clips": [ { "file": "low.wav" } ] }"#)
        let (status, stdout, stderr) = try await outcome([lan, "--check"])
        #expect(status == 0, "\(stderr)")
        #expect(stdout.contains("Home Assistant's media player \"Desk speaker\" on 0.0.0.0:6053, with its encryption key, announced on the network (mDNS) as desk-speaker through avahi-daemon\n"), "\(stdout)")
        let local = try session(#"{ "name": "Tones", "device": "null", "esphome": { "listen": "127.0.0.1:6053" }, "clips": [ { "file": "low.wav" } ] }"#)
        let (localStatus, localOut, localErr) = try await outcome([local, "--check"])
        #expect(localStatus == 0, "\(localErr)")
        #expect(localOut.contains("Home Assistant's media player \"Tones\" on 127.0.0.1:6053, without a key (this machine only), not announced on the network\n"), "\(localOut)")
    }

    /// With a location, `--check` prints today's sun times to compare with a weather site, and
    /// warns of a sun time the session uses that will not happen on some days: at Tromsø the
    /// sun does not set for weeks every summer, whatever day the test runs on.
    @Test func checkPrintsTodaysSunTimesAndWarnsOfDaysWithoutThem() async throws {
        let path = try session("""
            { "location": { "latitude": 69.65, "longitude": 18.96 }, "device": "null",
              "activeHours": [ { "from": "sunset-30m", "to": "23:00" } ], "clips": [ { "file": "low.wav" } ] }
            """)
        let result = try await DaemonProcess.run([path, "--check"], environment: ["TZ": "UTC"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(result.stdout)")
        #expect(lines.last?.hasPrefix("sun at 69.65,18.96 on ") == true, "\(result.stdout)")
        for event in ["dawn ", "sunrise ", "sunset ", "dusk "] { #expect(lines.last?.contains(event) == true, "\(result.stdout)") }
        #expect(result.stderr.hasPrefix("\(path): warning: there is no sunset on "), "\(result.stderr)")
        #expect(result.stderr.contains("while the sun stays up"), "\(result.stderr)")
        // Only the sun times the session uses are warned of.
        #expect(!result.stderr.contains("no dawn"), "\(result.stderr)")
    }

    @Test func checkNamesAClipThatDoesNotDecode() async throws {
        try folder.write("broken.wav", Array("RIFF....WAVEjunk".utf8))
        let path = try session(#"{ "device": "null", "clips": [ { "file": "low.wav" }, { "file": "broken.wav" }, { "file": "gone.wav" } ] }"#)
        let (status, _, stderr) = try await outcome([path, "--check"])
        #expect(status == 65)
        #expect(stderr.contains("\(path):1: clip broken: broken.wav: "))
        #expect(stderr.contains("\(path):1: clip gone: gone.wav: no such file"))
        #expect(stderr.split(separator: "\n").count == 2, "one line per problem, nothing twice: \(stderr)")
    }

    /// `1e999` is valid JSON that no field can hold: it was read as infinity and then
    /// reported as "not valid JSON" at another column. It is named where it stands.
    @Test func aNumberTooLargeForAnyFieldIsNamedWhereItStands() async throws {
        let path = try session(#"{ "volume": 1e999, "clips": [ { "file": "low.wav" } ] }"#)
        let (status, _, stderr) = try await outcome([path, "--check"])
        #expect(status == 65)
        #expect(stderr == "\(path):1:13: the number 1e999 is too large for any field\n", "\(stderr)")
    }

    /// `--check` used to stop at the file's own problems and report clip files only on a
    /// second run, without their lines; it now reports both at once, each with its line.
    @Test func checkReportsTheFilesAndTheClipFilesProblemsInOneRun() async throws {
        let path = try session("""
            {
              "volume": 3,
              "cue": "bell.wav",
              "clips": [
                { "file": "low.wav" },
                { "file": "gone.wav" }
              ]
            }
            """)
        let (status, stdout, stderr) = try await outcome([path, "--check"])
        #expect(status == 65)
        #expect(stdout.isEmpty)
        #expect(stderr == """
            \(path):2: volume: 3 is out of range (expected 0 to 1, or a list of steps such as [{\"from\": \"07:00\", \"level\": 0.8}])
            \(path):3: cue: bell.wav: no such file (looked for \(folder.file("bell.wav")))
            \(path):6: clip gone: gone.wav: no such file (looked for \(folder.file("gone.wav")))

            """)
    }

    /// A bad `interval.min` used to be followed by a complaint about the default that took
    /// its place ("min (10m) is longer than max (1m)").
    @Test func aBadIntervalIsReportedOnce() async throws {
        let path = try session(#"{ "interval": { "min": "soon", "max": "1m" }, "clips": [ { "file": "low.wav" } ] }"#)
        let (status, _, stderr) = try await outcome([path, "--check"])
        #expect(status == 65)
        #expect(stderr == "\(path):1: interval.min: \"soon\" is not a duration (expected e.g. \"45s\", \"3m\", \"1h30m\" or a number of seconds)\n")
    }

    @Test func aTrailingCommaIsNamed() async throws {
        let path = try session("{\n  \"clips\": [ { \"file\": \"low.wav\" }, ]\n}\n")
        let (status, _, stderr) = try await outcome([path, "--check"])
        #expect(status == 65)
        #expect(stderr == "\(path):2:37: not valid JSON: trailing comma before ']' (JSON allows none after the last item)\n")
    }

    @Test func invalidSessionExits65WithOneLinePerProblem() async throws {
        let path = try session("""
            { "clips": [ { "file": "low.wav",
                           "windows": [ { "from": "25:00", "to": "02:00" } ] } ],
              "volume": 3 }
            """)
        let (status, stdout, stderr) = try await outcome([path] + socket)
        #expect(status == 65)
        #expect(stdout.isEmpty)
        // In the order of the file's lines, whatever order they were found in.
        #expect(stderr == """
            \(path):2: clips[0].windows[0].from: "25:00" is not a time: the hour must be 0 to 23 (00:00 is midnight)
            \(path):3: volume: 3 is out of range (expected 0 to 1, or a list of steps such as [{\"from\": \"07:00\", \"level\": 0.8}])

            """)
    }

    @Test func notJSONExits65WithLineAndColumn() async throws {
        let path = try session("{\n  \"clips\": [ { \"file\": \"low.wav\" } \n")
        let (status, _, stderr) = try await outcome([path] + socket)
        #expect(status == 65)
        #expect(stderr == "\(path):3:1: not valid JSON: unexpected end of file, expected ',' or ']'\n")
    }

    @Test func missingSessionExits66() async throws {
        let (status, _, stderr) = try await outcome([folder.file("nope.json")])
        #expect(status == 66)
        #expect(stderr == "\(folder.file("nope.json")): no such file\n")
    }

    @Test(arguments: [[], ["a.json", "--log-level", "loud"], ["a.json", "--seed", "-1"], ["a.json", "--frobnicate"]])
    func badCommandLineExits64(arguments: [String]) async throws {
        let (status, _, stderr) = try await outcome(arguments)
        #expect(status == 64)
        #expect(stderr.lowercased().contains("usage: jukeboxd"))
    }

    @Test func noPlayableClipExits65() async throws {
        let path = try session(#"{ "clips": [ { "file": "gone.wav" } ] }"#)
        let (status, _, stderr) = try await outcome([path, "--device", fileDevice] + socket)
        #expect(status == 65)
        #expect(stderr.contains("clip gone left out: gone.wav: no such file"))
        #expect(stderr.contains("none of the session's clips can be played"))
    }

    @Test func playsWholeClipsOneAfterAnotherUntilTheDurationEnds() async throws {
        let path = try session("""
            { "interval": { "min": "200ms", "max": "400ms" }, "duration": "3s",
              "clips": [ { "file": "low.wav" }, { "file": "mid.wav" }, { "file": "high.wav" } ] }
            """)
        let (status, _, stderr) = try await outcome([path, "--device", fileDevice, "--seed", "7"] + socket)
        #expect(status == 0, "\(stderr)")
        let played = stderr.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "played ") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " })
        }
        #expect(played.count >= 5, "\(stderr)")
        for cycle in stride(from: 0, to: played.count - 2, by: 3) {
            #expect(Set(played[cycle..<(cycle + 3)]) == ["low", "mid", "high"], "no repeats within a cycle: \(played)")
        }
        let expected = played.flatMap { id in WAVFile.pcm16(tones.first { $0.id == id }!.samples) }
        let out = try folder.read("out.raw")
        #expect(out.count == expected.count)
        #expect(out == expected, "every clip whole, in the logged order, nothing between them")
        #expect(stderr.contains("reached its duration of 3s"))
    }

    @Test func sigtermStopsAndExits0() async throws {
        let path = try session(#"{ "interval": { "min": "1h", "max": "2h" }, "clips": [ { "file": "low.wav" } ] }"#)
        // Signalled once its services run: a SIGTERM in the first moments of start-up, before
        // the service group handles signals, is lost.
        let run = try await DaemonProcess.withDaemon([path, "--device", fileDevice] + socket, ready: "control socket listening") { _ in }
        #expect(run.status == 0)
        #expect(run.lines.last?.hasSuffix("stopped") == true, "\(run.lines)")
    }

    @Test func deviceThatDoesNotExistIsRetriedNotFatal() async throws {
        let path = try session(#"{ "interval": { "min": "100ms", "max": "100ms" }, "clips": [ { "file": "low.wav" } ] }"#)
        let run = try await DaemonProcess.withDaemon(
            [path, "--device", "jukebox_absent_pcm"] + socket, ready: "cannot open", stopWith: .interrupt) { _ in }
        let line = run.lines.first { $0.contains("cannot open") }
        #expect(line?.contains(#"audio device "jukebox_absent_pcm": cannot open: No such file or directory (check the name with `aplay -L`"#) == true)
        #expect(line?.contains("low stays queued, retrying in 0.5s") == true)
        // Told at start, before any clip, with the devices there are.
        #expect(run.lines.contains { $0.contains(#"audio device "jukebox_absent_pcm" is not there (the devices here are "#) && $0.hasSuffix("jukeboxd runs on and tries the device again at each clip") }, "\(run.lines)")
        #expect(run.status == 0)
    }
}

extension JukeboxdCommandTests {
    /// Without HOME, XDG_STATE_HOME, STATE_DIRECTORY or --state, the state used to go to
    /// /tmp/.local/state, where another user could plant a symlink for root's daemon to write
    /// through. There is no safe default, so the daemon says so and exits 78.
    @Test func noPlaceForTheStateExits78NamingTheOption() async throws {
        let path = try session(#"{ "clips": [ { "file": "low.wav" } ] }"#)
        let result = try await Subprocess.run(
            .path("/usr/bin/env"),
            arguments: ["-u", "HOME", "-u", "XDG_STATE_HOME", "-u", "STATE_DIRECTORY", DaemonProcess.binaryDirectory + "/jukeboxd",
                        path, "--socket", folder.file("control.sock"), "--device", fileDevice],
            platformOptions: TestProcesses.options, output: .string(limit: 1 << 16), error: .string(limit: 1 << 16))
        #expect(DaemonProcess.status(result.terminationStatus) == 78)
        #expect(result.standardError == "jukeboxd: no place for the state file: HOME, XDG_STATE_HOME and STATE_DIRECTORY are all unset; give one with --state PATH (in a folder of your own)\n")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/.local/state/jukeboxd/session.json"))
    }

    @Test func aStateFolderOthersCanWriteInExits78() async throws {
        let path = try session(#"{ "clips": [ { "file": "low.wav" } ] }"#)
        mkdir(folder.file("shared"), 0o777)
        chmod(folder.file("shared"), 0o1777)
        let (status, _, stderr) = try await outcome([path, "--socket", folder.file("control.sock"), "--state", folder.file("shared/state.json"), "--device", fileDevice])
        #expect(status == 78)
        #expect(stderr.contains("the state folder \(folder.file("shared")) is writable by everyone"), "\(stderr)")
    }
}

extension JukeboxdCommandTests {
    /// `--help` lists every exit status the program uses, as the README's table does.
    @Test func helpListsEveryExitStatus() async throws {
        let (status, stdout, _) = try await outcome(["--help"])
        #expect(status == 0)
        let text = stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for code in ["64", "65", "66", "67", "73", "75", "77", "78"] {
            #expect(text.contains(" \(code) "), "--help does not mention exit status \(code): \(text)")
        }
    }

    @Test func checkCountsOneClipInTheSingular() async throws {
        let path = try session(#"{ "clips": [ { "file": "low.wav" } ] }"#)
        let (status, stdout, _) = try await outcome([path, "--check", "--device", "null"])
        #expect(status == 0)
        #expect(stdout == "\(path): OK: \"session\", 1 clip (1 enabled), device \"null\"\n")
    }

    /// `--duration` takes a length from above 0 to 10 years, checked before anything runs.
    @Test func durationIsCheckedAtUnderAndOverItsLimits() async throws {
        let path = try session(#"{ "device": "null", "clips": [ { "file": "low.wav" } ] }"#)
        for length in ["20s", "87600h"] {
            let taken = try await outcome([path, "--check", "--duration", length])
            #expect(taken.0 == 0, "\(length): \(taken.2)")
        }
        for (length, words) in [("0s", "--duration must be longer than 0s"), ("87601h", #"--duration: "87601h" is longer than 10 years"#),
                                ("soon", #"--duration: "soon" is not a length (such as 20s, 30m or 2h)"#)] {
            let refused = try await outcome([path, "--check", "--duration", length])
            #expect(refused.0 == 64, "\(length)")
            #expect(refused.2.contains(words), "\(length): \(refused.2)")
        }
    }

    /// `--check` used to pass a session whose device was misspelt; the mistake showed only in
    /// the log, at the first clip. It now opens the device as the service would, and a name
    /// that is not there is an error (69) on the line that names it, with the name meant and
    /// the devices there are. ALSA's configuration here is the system's and the test's, which
    /// defines one device.
    @Test func checkOpensTheDeviceAndNamesTheOnesThereAre() async throws {
        try folder.write("asound.conf", text: #"pcm.desk_speaker { type null hint { show on description "Desk" } }"#)
        let environment = ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + folder.file("asound.conf")]
        func check(_ device: String, _ options: [String] = []) async throws -> (path: String, outcome: DaemonProcess.Outcome) {
            let path = try session("{\n  \"name\": \"Desk\",\n  \"device\": \"\(device)\",\n  \"clips\": [ { \"file\": \"low.wav\" } ]\n}\n")
            return (path, try await DaemonProcess.run([path, "--check"] + options, environment: environment))
        }
        let good = try await check("desk_speaker")
        #expect(good.outcome.status == 0, "\(good.outcome.stderr)")
        #expect(good.outcome.stdout == "\(good.path): OK: \"Desk\", 1 clip (1 enabled), device \"desk_speaker\"\n")
        #expect(good.outcome.stderr.isEmpty, "\(good.outcome.stderr)")
        // Misspelt: the name meant, and the devices there are.
        let misspelt = try await check("desk_speker")
        #expect(misspelt.outcome.status == 69)
        #expect(misspelt.outcome.stdout.isEmpty)
        let line = misspelt.outcome.stderr
        #expect(line.hasPrefix("\(misspelt.path):3: device: audio device \"desk_speker\" is not there (did you mean desk_speaker? the devices here are "), "\(line)")
        #expect(line.contains("desk_speaker") && line.hasSuffix("; a USB device may not be plugged in yet)\n"), "\(line)")
        #expect(!line.contains("ALSA lib") && line.split(separator: "\n").count == 1, "one line, without libasound's own: \(line)")
        // A card by name and by number that is not there: no guess, the devices there are.
        for device in ["plughw:CARD=Device,DEV=0", "hw:7"] {
            let absent = try await check(device)
            #expect(absent.outcome.status == 69, "\(device)")
            #expect(absent.outcome.stderr.hasPrefix("\(absent.path):3: device: audio device \"\(device)\" is not there (the devices here are "), "\(absent.outcome.stderr)")
            #expect(absent.outcome.stderr.contains("desk_speaker"), "\(absent.outcome.stderr)")
        }
        // Given on the command line, the option is named rather than the file.
        let option = try await check("desk_speaker", ["--device", "hw:7"])
        #expect(option.outcome.status == 69)
        #expect(option.outcome.stderr.hasPrefix("jukeboxd: --device: audio device \"hw:7\" is not there ("), "\(option.outcome.stderr)")
        // The file's own problems come first, and decide the status.
        let both = try await check("hw:7\", \"volume\": \"3")
        #expect(both.outcome.status == 65, "\(both.outcome.stderr)")
        #expect(both.outcome.stderr.contains(":3: volume: "), "\(both.outcome.stderr)")
    }
}

extension JukeboxdCommandTests {
    /// `--check` makes every refusal the start makes, in the same words and with the same
    /// status: it used to say OK to sessions the daemon then refused to start.
    @Test func checkRefusesWhatTheStartRefuses() async throws {
        mkdir(folder.file("shared"), 0o777)
        chmod(folder.file("shared"), 0o1777)
        let refusals: [(session: String, options: [String], status: Int32, words: String)] = [
            (#""http": { "listen": "0.0.0.0:8080" }"#, [], 78, "without a password"),
            (#""http": { "listen": "127.0.0.1:8080", "passwordFile": "missing-password" }"#, [], 78, "missing-password"),
            (#""mqtt": { "broker": "mqtt://127.0.0.1:1", "passwordFile": "missing-mqtt" }"#, [], 78, "the MQTT password file"),
            ("", ["--http", "0.0.0.0:8080"], 78, "without a password"),
            ("", ["--http", "nonsense"], 64, "expected HOST:PORT"),
            ("", ["--socket-group", "no-such-group-here"], 67, #"no group named "no-such-group-here""#),
            ("", ["--state", folder.file("shared/state.json")], 78, "is writable by everyone"),
        ]
        for refusal in refusals {
            let body = refusal.session.isEmpty ? "" : refusal.session + ", "
            let path = try session(#"{ \#(body)"device": "null", "clips": [ { "file": "low.wav" } ] }"#)
            let options = refusal.options.contains("--state") ? refusal.options : refusal.options + ["--state", folder.file("state/s.json")]
            let start = try await outcome([path, "--socket", folder.file("control.sock")] + options)
            let check = try await outcome([path, "--check"] + options)
            #expect(start.0 == refusal.status, "\(refusal): \(start.2)")
            #expect(check.0 == start.0, "\(refusal): --check \(check.0 ?? -1) \(check.2)")
            #expect(start.2.contains(refusal.words) && check.2.contains(refusal.words), "\(refusal): \(start.2) | \(check.2)")
            #expect(!check.1.contains("OK"), "\(refusal): \(check.1)")
        }
        // --check makes no state folder; the start makes it.
        let path = try session(#"{ "device": "null", "clips": [ { "file": "low.wav" } ] }"#)
        let check = try await outcome([path, "--check", "--state", folder.file("new/state.json")])
        #expect(check.0 == 0, "\(check.2)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("new")))
    }
}

extension JukeboxdCommandTests {
    /// `bed.group` names a group the FIFO is given to: one that does not exist is refused with
    /// its line; one jukeboxd's user is not in refuses the start (it could not share the
    /// FIFO), and `--check`, run by hand outside the unit that adds the group, warns.
    @Test(.enabled(if: UnixUser.isPossible, Comment(rawValue: UnixUser.impossible)))
    func theBedsGroupMustExistAndHoldTheDaemonsUser() async throws {
        let missing = try session(#"{ "device": "null", "bed": { "pipe": "bed", "group": "no-such-group-here" }, "clips": [ { "file": "low.wav" } ] }"#)
        let check = try await outcome([missing, "--check"])
        #expect(check.0 == 65 && check.2.contains(#"bed.group: no group named "no-such-group-here""#), "\(check.2)")
        // A group this process is not in: made for the test, removed after.
        let name = "jbt\(UInt32.random(in: 10_000_000...99_999_999))"
        let made = try await Tool.run("groupadd", [name])
        try #require(made.status == 0, "groupadd: \(made.stderr)")
        let path = try session(#"{ "device": "null", "bed": { "pipe": "bed", "group": "\#(name)" }, "clips": [ { "file": "low.wav" } ] }"#)
        let start = try await outcome([path] + socket)
        let warned = try await outcome([path, "--check"])
        _ = try await Tool.run("groupdel", [name])
        #expect(start.0 == 77 && start.2.contains(#"is not in the group "\#(name)" that bed.group gives the music bed's FIFO to"#), "\(start.2)")
        #expect(warned.0 == 0 && warned.2.contains("warning: ") && warned.2.contains("is not in the group"), "\(warned.2)")
    }
}

