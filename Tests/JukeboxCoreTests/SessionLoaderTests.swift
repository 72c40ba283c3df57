import Glibc
import JukeboxCore
import JukeboxTestSupport
import Testing
import JukeboxCoreTestSupport

@Suite("Session file", .timeLimit(.minutes(1)))
struct SessionLoaderTests {
    func load(_ text: String, path: String = "/srv/jukebox/session.json") throws(SessionLoadError) -> Session {
        try SessionLoader.parse(Array(text.utf8), path: path)
    }

    func problems(_ text: String) -> [String] {
        do {
            _ = try load(text)
            return []
        } catch {
            #expect(error.kind == .invalid)
            #expect(error.exitCode == 65)
            return error.problems
        }
    }

    @Test func theLoudnessTargetIsFromMinus40ToMinus5LUFS() throws {
        let clips = #""clips": [ { "file": "a.wav" } ]"#
        #expect(try load(#"{ \#(clips) }"#).loudness == nil)
        for at in [-40.0, -18, -5] { #expect(try load(#"{ "loudness": \#(at), \#(clips) }"#).loudness == at) }
        for over in ["-40.5", "-4.9", "0"] {
            #expect(problems(#"{ "loudness": \#(over), \#(clips) }"#)
                == ["/srv/jukebox/session.json:1: loudness: \(over) is out of range (expected -40 to -5 LUFS, such as -18)"])
        }
        #expect(problems(#"{ "loudness": "loud", \#(clips) }"#).first?.contains("loudness") == true)
    }

    @Test func theWebRemoteServesHTTPSUnlessToldOtherwise() throws {
        let clips = #""clips": [ { "file": "a.wav" } ]"#
        let plain = try load(#"{ "http": { "listen": "0.0.0.0:8080" }, \#(clips) }"#).web
        #expect(plain?.https == true && plain?.certificateFile == nil && plain?.scheme == "https")
        #expect(try load(#"{ "http": { "listen": "0.0.0.0:8080", "https": false }, \#(clips) }"#).web?.scheme == "http")
        let own = try load(#"{ "http": { "listen": "0.0.0.0:443", "certificate": "tls/fullchain.pem", "key": "/etc/ssl/private/key.pem" }, \#(clips) }"#).web
        #expect(own?.certificateFile == "/srv/jukebox/tls/fullchain.pem" && own?.keyFile == "/etc/ssl/private/key.pem")
        #expect(problems(#"{ "http": { "listen": "0.0.0.0:8080", "https": "yes" }, \#(clips) }"#)
            == ["/srv/jukebox/session.json:1: http.https: \"yes\" is not true or false (true: HTTPS, the default; false: plain HTTP)"])
        #expect(problems(#"{ "http": { "listen": "0.0.0.0:8080", "certificate": "c.pem" }, \#(clips) }"#)
            == ["/srv/jukebox/session.json:1: http.certificate: needs http.key too: give both your certificate and its key, or neither (jukeboxd then makes its own)"])
        #expect(problems(#"{ "http": { "listen": "0.0.0.0:8080", "https": false, "certificate": "c.pem", "key": "k.pem" }, \#(clips) }"#)
            == ["/srv/jukebox/session.json:1: http.certificate: is for HTTPS, but http.https is false: leave out the certificate and key, or set https to true"])
    }

    @Test func fullExampleFromTheFormatDescription() throws {
        let session = try load("""
            {
              "name": "League practice",
              "clipsDirectory": "/",
              "device": "plughw:1,0",
              "interval": { "min": "45s", "max": "3m" },
              "activeHours": [ { "from": "08:00", "to": "22:30", "days": ["mon","tue","wed","thu","fri"] } ],
              "duration": "40m",
              "cue": "chime.wav",
              "volume": 0.8,
              "clips": [
                { "id": "ward", "file": "ward-the-river.wav", "title": "Ward the river", "weight": 2, "gain": -3,
                  "windows": [ { "from": "22:00", "to": "02:00" } ], "enabled": true }
              ]
            }
            """)
        #expect(session.name == "League practice")
        #expect(session.deviceName == "plughw:1,0")
        #expect(session.interval == .seconds(45) ... .seconds(180))
        #expect(session.activeHours == [TimeWindow(from: TimeOfDay("08:00")!, to: TimeOfDay("22:30")!, days: [.mon, .tue, .wed, .thu, .fri])])
        #expect(session.duration == .seconds(2400))
        #expect(session.cue == ClipSource(file: "chime.wav", path: "/chime.wav"))
        #expect(session.volume == 0.8)
        let clip = try #require(session.clips.first)
        #expect(clip.id == "ward")
        #expect(clip.title == "Ward the river")
        #expect(clip.weight == 2)
        #expect(clip.gainDecibels == -3)
        #expect(clip.source == ClipSource(file: "ward-the-river.wav", path: "/ward-the-river.wav"))
        #expect(clip.windows == [TimeWindow(from: TimeOfDay("22:00")!, to: TimeOfDay("02:00")!)])
    }

    @Test func defaultsAreFilledIn() throws {
        let session = try load(#"{ "clips": [ { "file": "sub/Good morning.wav" } ] }"#, path: "/srv/jukebox/daily.json")
        #expect(session.name == "daily")
        #expect(session.clipsDirectory == "/srv/jukebox")
        #expect(session.deviceName == "default")
        #expect(session.interval == Session.defaultInterval)
        #expect(session.activeHours.isEmpty)
        #expect(session.duration == nil)
        #expect(session.cue == nil)
        #expect(session.volume == 1)
        #expect(session.playback == PlaybackOptions(leadIn: .zero, fade: .milliseconds(10), keepDeviceOpen: .idle))
        let clip = try #require(session.clips.first)
        #expect(clip.id == "Good morning")
        #expect(clip.title == "Good morning")
        #expect(clip.source.path == "/srv/jukebox/sub/Good morning.wav")
        #expect((clip.weight, clip.gainDecibels, clip.enabled) == (1, 0, true))
        #expect(clip.windows.isEmpty)
    }

    @Test func relativePathsResolveAgainstTheSessionFilesFolder() throws {
        let session = try load(#"{ "clipsDirectory": "..", "clips": [ { "file": "a.wav" } ], "cue": "c.wav" }"#, path: "/srv/jukebox/s.json")
        #expect(session.clipsDirectory == "/srv")
        #expect(session.clips[0].source.path == "/srv/a.wav")
        #expect(session.cue?.path == "/srv/c.wav")
    }

    @Test func durationsAcceptTextAndSeconds() throws {
        let session = try load(#"{ "interval": { "min": 30, "max": "1h30m" }, "duration": "2h", "clips": [ { "file": "a.wav" } ] }"#)
        #expect(session.interval == .seconds(30) ... .seconds(5400))
        #expect(session.duration == .seconds(7200))
    }

    @Test func playbackOptionsForReceiversAndDACs() throws {
        let session = try load(#"{ "leadIn": "1s", "fade": "5ms", "keepDeviceOpen": "always", "clips": [ { "file": "a.wav" } ] }"#)
        #expect(session.playback == PlaybackOptions(leadIn: .seconds(1), fade: .milliseconds(5), keepDeviceOpen: .always))
        #expect(try load(#"{ "fade": 0, "clips": [ { "file": "a.wav" } ] }"#).playback.fade == .zero)
    }

    /// `at` times, in both forms; a clip with them is left out of the random picks unless it
    /// has a weight.
    @Test func atTimesAreRead() throws {
        let session = try load("""
            { "holidays": ["12-25"], "atGrace": "5m",
              "clips": [ { "file": "bell.wav", "at": ["07:55@mon-fri", { "time": "12:30@mon-fri", "except": ["holidays"] }] },
                         { "file": "chime.wav", "at": ["*:00"], "weight": 2 },
                         { "file": "tune.wav" } ] }
            """)
        #expect(session.atGrace == .seconds(300))
        #expect(session.clips.map(\.at.count) == [2, 1, 0])
        #expect(session.clips[0].at.map(\.description) == ["07:55@mon-fri", "12:30@mon-fri"])
        #expect(session.clips[0].at[1].filter == DateFilter(except: [.holidays]))
        #expect(session.clips.map(\.isShuffled) == [false, true, true])
        #expect(try load(#"{ "clips": [ { "file": "a.wav" } ] }"#).atGrace == .seconds(120))
        let quiet = try load(#"{ "quiet": [ { "from": "22:00", "to": "07:00" } ], "clips": [ { "file": "a.wav" } ] }"#)
        #expect(quiet.quiet == [TimeWindow(from: TimeOfDay("22:00")!, to: TimeOfDay("07:00")!)])
    }

    /// A session with a cap and no volume starts at the cap, rather than being refused for a
    /// default volume above it.
    @Test func withoutAVolumeTheCapIsTheStart() throws {
        #expect(try load(#"{ "maxVolume": 0.8, "clips": [ { "file": "a.wav" } ] }"#).volume == 0.8)
        #expect(try load(#"{ "maxVolume": 0.8, "volume": 0.8, "clips": [ { "file": "a.wav" } ] }"#).volume == 0.8)
        #expect(problems(#"{ "maxVolume": 0.8, "volume": 0.81, "clips": [ { "file": "a.wav" } ] }"#) == ["/srv/jukebox/session.json:1: volume: 0.81 is above maxVolume (0.8); lower it, or raise maxVolume"])
    }

    /// `volume` as a schedule: steps with clock or sun times, in the session's order; 1 to 48.
    @Test func volumeBySchedule() throws {
        let session = try load(#"{ "location": { "latitude": 52.37, "longitude": 4.89 }, "maxVolume": 0.8, "volume": [ { "from": "07:00", "level": 0.8 }, { "from": "sunset+30m", "level": 0.3 } ], "clips": [ { "file": "a.wav" } ] }"#)
        #expect(session.volumeSchedule == [VolumeStep(from: .clock(TimeOfDay("07:00")!), level: 0.8), VolumeStep(from: .sun(.sunset, offset: .seconds(1800)), level: 0.3)])
        #expect(session.volume == 0.8)
        #expect(session.sunEventsUsed == [.sunset])
        func steps(_ count: Int) -> String {
            let list = (0..<count).map { #"{ "from": ""# + TimeOfDay(minuteOfDay: $0 * 30)!.description + #"", "level": 0.5 }"# }
            return #"{ "volume": ["# + list.joined(separator: ",") + #"], "clips": [ { "file": "a.wav" } ] }"#
        }
        #expect(try load(steps(1)).volumeSchedule.count == 1)
        #expect(try load(steps(47)).volumeSchedule.count == 47)
        #expect(try load(steps(48)).volumeSchedule.count == 48)
        let refusal = #"/srv/jukebox/session.json:1: volume: a volume schedule lists from 1 to 48 steps such as {"from": "07:00", "level": 0.8}"#
        #expect(problems(steps(0)) == [refusal])
        #expect(problems(#"{ "volume": [\#(Array(repeating: #"{ "from": "07:00", "level": 0.5 }"#, count: 49).joined(separator: ","))], "clips": [ { "file": "a.wav" } ] }"#) == [refusal])
    }

    /// `at` takes 1 to 100 times, `dates` and `holidays` 1 to 400 dates, `atGrace` 0 s to 1 h.
    @Test func scheduleListsAndTheGraceHaveLimits() throws {
        func times(_ count: Int) -> String {
            #"{ "clips": [ { "file": "a.wav", "at": ["# + Array(repeating: #""*:00""#, count: count).joined(separator: ",") + "] } ] }"
        }
        #expect(try load(times(1)).clips[0].at.count == 1)
        #expect(try load(times(100)).clips[0].at.count == 100)
        #expect(problems(times(101)) == [#"/srv/jukebox/session.json:1: clips[0].at: has 101 times, more than the 100 it may have"#])
        func holidays(_ count: Int) -> String {
            #"{ "holidays": ["# + Array(repeating: #""12-25""#, count: count).joined(separator: ",") + #"], "clips": [ { "file": "a.wav" } ] }"#
        }
        #expect(try load(holidays(1)).holidays.count == 1)
        #expect(try load(holidays(400)).holidays.count == 400)
        #expect(problems(holidays(401)) == [#"/srv/jukebox/session.json:1: holidays: has 401 dates, more than the 400 it may have"#])
        // 2 000 times in all, and one more.
        func clips(_ count: Int, timesEach: Int) -> String {
            let times = Array(repeating: #""*:00""#, count: timesEach).joined(separator: ",")
            return #"{ "clips": ["# + (0..<count).map { #"{ "file": "a.wav", "id": "c\#($0)", "at": [\#(times)] }"# }.joined(separator: ",") + "] }"
        }
        #expect(try load(clips(20, timesEach: 100)).clips.count == 20)
        let oneMore = clips(20, timesEach: 100).replacing("] }] }", with: #"] }, { "file": "a.wav", "id": "extra", "at": ["07:00"] }] }"#)
        #expect(problems(oneMore) == ["/srv/jukebox/session.json:1: clips: the clips have 2001 at times in all, more than the 2000 a session may have; an hourly time such as *:00 counts once"])
        func grace(_ text: String) -> String { #"{ "atGrace": ""# + text + #"", "clips": [ { "file": "a.wav" } ] }"# }
        #expect(try load(grace("0s")).atGrace == .zero)
        #expect(try load(grace("59m")).atGrace == .seconds(59 * 60))
        #expect(try load(grace("1h")).atGrace == .seconds(3600))
        #expect(problems(grace("1h1s")) == [#"/srv/jukebox/session.json:1: atGrace: "1h1s" is out of range (0s to 1h: how late an at time may still play after a short outage)"#])
    }

    /// `missed` is skip (the default) or play-late; `playLateWithin` (an hour unless set) is
    /// from a minute to a week, and only with play-late.
    @Test func whatBecomesOfAMissedTimeIsCheckedWithTheLine() throws {
        func session(_ fields: String) -> String { #"{ \#(fields), "clips": [ { "file": "a.wav" } ] }"# }
        #expect(try load(#"{ "clips": [ { "file": "a.wav" } ] }"#).missed == .skip)
        #expect(try load(session(#""missed": "skip""#)).missed == .skip)
        #expect(try load(session(#""missed": "play-late""#)).missed == .playLate(within: .seconds(3600)))
        for (within, seconds) in [("1m", 60), ("7d", 0), ("168h", 7 * 86_400), ("90", 90)] where seconds > 0 {
            #expect(try load(session(#""missed": "play-late", "playLateWithin": "\#(within)""#)).missed == .playLate(within: .seconds(seconds)))
        }
        #expect(try load(session(#""missed": "play-late", "atGrace": "10m""#)).grace.latest == .seconds(3600))
        #expect(try load(session(#""missed": "play-late", "atGrace": "1h", "playLateWithin": "5m""#)).grace.latest == .seconds(3600), "never less than atGrace")
        #expect(problems(session(#""missed": "late""#)) == [
            #"/srv/jukebox/session.json:1: missed: "late" is not "skip" or "play-late" (what becomes of a fixed time that could not play on time)"#])
        for over in ["59s", "168h1s", "10y"] {
            #expect(problems(session(#""missed": "play-late", "playLateWithin": "\#(over)""#)).first?.contains("playLateWithin: ") == true, "\(over)")
        }
        #expect(problems(session(#""missed": "play-late", "playLateWithin": "59s""#)) == [
            #"/srv/jukebox/session.json:1: playLateWithin: "59s" is not from 1m to 168h (how late a missed fixed time may still play)"#])
        #expect(problems(session(#""playLateWithin": "2h""#)) == [
            #"/srv/jukebox/session.json:1: playLateWithin: applies only with "missed": "play-late"; add that, or leave playLateWithin out"#])
    }

    /// `afterCut` is resume (the default), restart or drop; a clip's `priority` is normal or
    /// now, and now is for a clip with `at` times.
    @Test func whatUrgentClipsDoIsCheckedWithTheLine() throws {
        #expect(try load(#"{ "clips": [ { "file": "a.wav" } ] }"#).afterCut == .resume)
        for choice in AfterCut.allCases {
            #expect(try load(#"{ "afterCut": "\#(choice.rawValue)", "clips": [ { "file": "a.wav" } ] }"#).afterCut == choice)
        }
        #expect(problems(#"{ "afterCut": "pause", "clips": [ { "file": "a.wav" } ] }"#) == [
            #"/srv/jukebox/session.json:1: afterCut: "pause" is not one of "resume", "restart", "drop" (what becomes of a clip an urgent one cuts)"#])
        let bell = try load(#"{ "clips": [ { "file": "a.wav", "at": ["08:00"], "priority": "now" }, { "file": "b.wav", "at": ["09:00"] } ] }"#)
        #expect(bell.clips.map(\.priority) == [.now, .normal])
        #expect(problems("""
            { "clips": [ { "file": "a.wav", "priority": "now" },
                         { "file": "b.wav", "at": ["09:00"], "priority": "urgent" } ] }
            """) == [
            #"/srv/jukebox/session.json:1: clips[0].priority: "now" is for a clip's at times, and this clip has none: add "at", or ask for it with play --now"#,
            #"/srv/jukebox/session.json:2: clips[1].priority: "urgent" is not "normal" or "now""#])
    }

    /// `duck`: the level in dB or as a fraction, attack and release from 0 to 10 s, the mode,
    /// MPD's addresses (TCP or a socket, with a password file) and snapclients; at most 16.
    @Test func theDuckSectionIsCheckedWithTheLine() throws {
        let session = try load("""
            { "duck": { "level": "-18dB", "attack": "200ms", "release": "2s", "mode": "pause",
                        "mpd": ["localhost", "[::1]:6601", { "address": "/run/mpd/socket", "passwordFile": "mpd.pass" }],
                        "snapcast": { "server": "snap.local", "clients": ["kitchen", "00:11:22:33:44:55"] } },
              "clips": [ { "file": "a.wav", "duck": false }, { "file": "b.wav" } ] }
            """)
        let settings = try #require(session.duck)
        #expect(abs(settings.level - 0.125_89) < 0.000_01)
        #expect(settings.attack == .milliseconds(200) && settings.release == .seconds(2) && settings.mode == .pause)
        #expect(settings.players == [
            .mpd(.tcp(host: "localhost", port: 6600), passwordFile: nil), .mpd(.tcp(host: "::1", port: 6601), passwordFile: nil),
            .mpd(.unix(path: "/run/mpd/socket"), passwordFile: "/srv/jukebox/mpd.pass"),
            .snapclient(server: .tcp(host: "snap.local", port: 1705), client: "kitchen"),
            .snapclient(server: .tcp(host: "snap.local", port: 1705), client: "00:11:22:33:44:55"),
        ])
        #expect(session.clips.map(\.ducks) == [false, true])
        #expect(try load(#"{ "duck": { "mpd": ["localhost"], "level": 0.3 }, "clips": [ { "file": "a.wav" } ] }"#).duck?.level == 0.3)
        let defaults = try #require(try load(#"{ "duck": { "mpd": ["localhost"] }, "clips": [ { "file": "a.wav" } ] }"#).duck)
        #expect(defaults.attack == .milliseconds(300) && defaults.release == .seconds(1) && defaults.mode == .lower)
        #expect(try load(#"{ "clips": [ { "file": "a.wav" } ] }"#).duck == nil)
        func duck(_ text: String) -> [String] { problems(#"{ "duck": "# + text + #", "clips": [ { "file": "a.wav" } ] }"#) }
        let line = "/srv/jukebox/session.json:1: "
        #expect(duck(#"{ "mpd": ["localhost"], "level": "-61dB" }"#) == [line + #"duck.level: "-61dB" is not a level to lower to: decibels from -60dB to 0dB such as "-18dB", or a fraction from 0 to 1 such as 0.2"#])
        #expect(try load(#"{ "duck": { "mpd": ["localhost"], "level": "-60dB" }, "clips": [ { "file": "a.wav" } ] }"#).duck.map { abs($0.level - 0.001) < 1e-12 } == true, "at the limit")
        #expect(try load(#"{ "duck": { "mpd": ["localhost"], "level": 1 }, "clips": [ { "file": "a.wav" } ] }"#).duck?.level == 1)
        #expect(duck(#"{ "mpd": ["localhost"], "level": 1.5 }"#).count == 1)
        #expect(duck(#"{ "mpd": ["localhost"], "level": "loud" }"#).count == 1)
        #expect(duck(#"{ "mpd": ["localhost"], "attack": "10s" }"#).isEmpty)
        #expect(duck(#"{ "mpd": ["localhost"], "release": "10s1ms" }"#) == [line + #"duck.release: "10s1ms" is out of range (0s to 10s)"#])
        #expect(duck(#"{ "mpd": ["localhost"], "mode": "mute" }"#) == [line + #"duck.mode: "mute" is not "lower" or "pause""#])
        #expect(duck(#"{ "mpd": ["localhost:70000"] }"#) == [line + #"duck.mpd[0]: "localhost:70000" is not MPD's address (HOST:PORT such as "localhost:6600", or the path of its socket such as "/run/mpd/socket")"#])
        #expect(duck(#"{ "mpd": [] }"#).count == 1)
        #expect(duck(#"{ "mpd": [{ "passwordFile": "p" }] }"#) == [line + #"duck.mpd[0].address: missing (MPD's address, such as "localhost:6600" or "/run/mpd/socket")"#])
        #expect(duck(#"{ "snapcast": { "server": "snap:1705" } }"#).first?.contains("duck.snapcast.clients") == true)
        #expect(duck(#"{ "snapcast": { "clients": ["a"] } }"#).first?.contains("duck.snapcast.server: missing") == true)
        #expect(try load(#"{ "duck": { "attack": "1s" }, "clips": [ { "file": "a.wav" } ] }"#).duck?.players == [], "for Home Assistant's sensor alone")
        #expect(duck(#"{ "mpd": ["localhost", "localhost:6600"] }"#) == [line + "duck: names a player twice"])
        let many = (0..<17).map { #""host\#($0)""# }.joined(separator: ",")
        #expect(duck(#"{ "mpd": [\#(many)] }"#) == [line + "duck: names 17 players, more than the 16 it may have"])
        #expect(duck(#"{ "mpd": [\#((0..<16).map { #""host\#($0)""# }.joined(separator: ","))] }"#).isEmpty)
        #expect(duck(#"{ "mpd": ["localhost"], "volume": 3 }"#).first?.contains(#"duck.volume: unknown key"#) == true)
        #expect(problems(#"{ "clips": [ { "file": "a.wav", "duck": "no" } ] }"#) == [line + #"clips[0].duck: "no" is not true or false"#])
    }

    /// `bed`: the pipe (beside the session when relative), the format the writer writes, the
    /// level, attack and release with the duck's limits; not with `keepDeviceOpen: always`.
    @Test func theBedSectionIsCheckedWithTheLine() throws {
        let bed = try #require(try load(#"{ "bed": { "pipe": "bed.fifo", "format": "48000:24:2", "level": "-12dB", "attack": "0s", "release": "10s" }, "clips": [ { "file": "a.wav" } ] }"#).bed)
        #expect(bed.pipe == "/srv/jukebox/bed.fifo")
        #expect(bed.format == StreamFormat(sampleRate: 48_000, bits: 24, channels: 2))
        #expect(abs(bed.level - 0.251_19) < 0.000_01 && bed.attack == .zero && bed.release == .seconds(10))
        let defaults = try #require(try load(#"{ "bed": { "pipe": "/run/jukeboxd/bed" }, "clips": [ { "file": "a.wav" } ] }"#).bed)
        #expect(defaults == BedSettings(pipe: "/run/jukeboxd/bed", format: StreamFormat(sampleRate: 44_100, bits: 16, channels: 2), level: DuckSettings.defaultLevel, attack: .milliseconds(300), release: .seconds(1)))
        #expect(try load(#"{ "clips": [ { "file": "a.wav" } ] }"#).bed == nil)
        func bedProblems(_ text: String) -> [String] { problems(#"{ "bed": "# + text + #", "clips": [ { "file": "a.wav" } ] }"#) }
        let line = "/srv/jukebox/session.json:1: "
        #expect(bedProblems(#"{ "format": "44100:16:2" }"#) == [line + #"bed.pipe: missing (the FIFO the music is written into, such as "/run/jukeboxd/bed", the path of MPD's fifo output)"#])
        #expect(bedProblems(#"{ "pipe": "" }"#).count == 1)
        #expect(bedProblems(#"{ "pipe": "b", "format": "44100:16" }"#) == [line + #"bed.format: "44100:16" is not RATE:BITS:CHANNELS, such as "48000:16:2"; it is the format the player writes, as MPD's fifo output's "format""#])
        #expect(bedProblems(#"{ "pipe": "b", "format": "44100:8:2" }"#) == [line + #"bed.format: "44100:8:2" has 8 bits (16, 24 or 32); it is the format the player writes, as MPD's fifo output's "format""#])
        #expect(bedProblems(#"{ "pipe": "b", "format": "7999:16:2" }"#).count == 1)
        #expect(bedProblems(#"{ "pipe": "b", "format": "8000:16:8" }"#).isEmpty, "at the limits")
        #expect(bedProblems(#"{ "pipe": "b", "format": "384001:16:2" }"#).count == 1)
        #expect(bedProblems(#"{ "pipe": "b", "format": "48000:16:9" }"#).count == 1)
        #expect(bedProblems(#"{ "pipe": "b", "level": "-61dB" }"#) == [line + #"bed.level: "-61dB" is not a level to lower the music to: decibels from -60dB to 0dB such as "-18dB", or a fraction from 0 to 1 such as 0.2"#])
        #expect(bedProblems(#"{ "pipe": "b", "level": "-60dB" }"#).isEmpty)
        #expect(bedProblems(#"{ "pipe": "b", "attack": "10s1ms" }"#) == [line + #"bed.attack: "10s1ms" is out of range (0s to 10s)"#])
        #expect(bedProblems(#"{ "pipe": "b", "volume": 1 }"#).first?.contains("bed.volume: unknown key") == true)
        #expect(problems(#"{ "keepDeviceOpen": "always", "bed": { "pipe": "b" }, "clips": [ { "file": "a.wav" } ] }"#)
            == [line + #"keepDeviceOpen: "always" is not needed with a bed: the bed keeps the device open and fed; remove it"#])
    }

    @Test func badTimeNamesTheFieldPath() {
        let text = """
            { "clips": [ { "file": "a.wav" }, { "file": "b.wav" }, { "file": "c.wav" },
              { "file": "d.wav", "windows": [ { "from": "25:00", "to": "02:00" } ] } ] }
            """
        #expect(problems(text) == [#"/srv/jukebox/session.json:2: clips[3].windows[0].from: "25:00" is not a time: the hour must be 0 to 23 (00:00 is midnight)"#])
    }

    @Test func everyProblemIsReportedWithItsLineInLineOrder() {
        let lines = problems("""
            { "volme": 0.5, "volume": 2, "interval": { "min": "5m", "max": "1m" },
              "activeHours": [ { "from": "8:00", "to": "noon", "days": ["monday"] } ],
              "clips": [ { "file": "a.wav", "weight": 0, "gain": "loud", "enabled": "yes" },
                         { "file": "b/a.wav" }, { "id": "x" } ] }
            """)
        let located = lines.map { line in
            let parts = line.split(separator: ":", maxSplits: 3)
            return (line: Int(parts[1]) ?? 0, field: String(parts[2].dropFirst()))
        }
        #expect(located.map(\.line) == [1, 1, 1, 2, 2, 3, 3, 3, 4, 4], "\(lines)")
        #expect(lines.contains(#"/srv/jukebox/session.json:1: volme: unknown key (did you mean "volume"?)"#))
        #expect(lines.contains(#"/srv/jukebox/session.json:1: volume: 2 is out of range (expected 0 to 1, or a list of steps such as [{"from": "07:00", "level": 0.8}])"#))
        #expect(lines.contains("/srv/jukebox/session.json:1: interval: min (5m) is longer than max (1m)"))
        #expect(Set(located[3...4].map(\.field)) == ["activeHours[0].to", "activeHours[0].days[0]"])
        #expect(Set(located[5...7].map(\.field)) == ["clips[0].weight", "clips[0].gain", "clips[0].enabled"])
        #expect(lines[8] == #"/srv/jukebox/session.json:4: clips[1].file: id "a" is already used by clips[0] (ids must be unique; set "id")"#)
        // A missing field is placed on the line of the object that lacks it.
        #expect(lines[9] == "/srv/jukebox/session.json:4: clips[2].file: missing (the clip's audio file)")
    }

    @Test(arguments: [
        (#"{ }"#, "clips: missing (list the session's clips, each with a \"file\")"),
        (#"{ "clips": [] }"#, "clips: is empty (a session needs at least one clip)"),
        (#"{ "clips": "a.wav" }"#, #"clips: "a.wav" is not a list of clips"#),
        (#"[1]"#, "a list is not an object"),
        (#"{ "clips": [ { "file": "" } ] }"#, #"clips[0].file: "" is not a non-empty string"#),
        (#"{ "clips": [ { "file": "a.wav", "windows": [ { "from": "10:00", "to": "10:00" } ] } ] }"#, "clips[0].windows[0]: from and to are both 10:00: the window is empty"),
        (#"{ "clips": [ { "file": "a.wav", "windows": [ { "from": "10:00" } ] } ] }"#, "clips[0].windows[0].to: missing (expected HH:MM, or a sun time such as sunset-15m)"),
        (#"{ "location": { "latitude": 52.37, "longitude": 4.89 }, "clips": [ { "file": "a.wav", "windows": [ { "from": "sunset-15", "to": "23:00" } ] } ] }"#, #"clips[0].windows[0].from: "sunset-15": the offset has no unit; write sunset-15m for minutes (s, m and h are understood)"#),
        (#"{ "clips": [ { "file": "a.wav", "windows": [ { "from": "sunset-15m", "to": "23:00" } ] } ] }"#, #"clips[0].windows[0].from: a sun time needs the session's location: add "location": {"latitude": 52.37, "longitude": 4.89} with your own place (degrees north and east; a map shows them)"#),
        (#"{ "location": { "latitude": 95, "longitude": 4.89 }, "clips": [ { "file": "a.wav" } ] }"#, "location.latitude: 95 is out of range (expected -90 to 90 degrees, north, negative south)"),
        (#"{ "location": { "latitude": 52.37 }, "clips": [ { "file": "a.wav" } ] }"#, "location.longitude: missing (degrees east, negative west, such as 52.37)"),
        (#"{ "location": { "latitude": 52.37, "longitude": 4.89, "altitude": 3 }, "clips": [ { "file": "a.wav" } ] }"#, #"location.altitude: unknown key (did you mean "latitude"?)"#),
        (#"{ "clips": [ { "file": "a.wav", "dates": ["holidays"] } ] }"#, #"clips[0].dates[0]: "holidays" can only be excluded (in except), not listed in dates"#),
        (#"{ "clips": [ { "file": "a.wav", "except": ["12-32"] } ] }"#, #"clips[0].except[0]: "12-32" is not a date (expected YYYY-MM-DD such as 2026-04-05, MM-DD for every year such as 12-25, or a range such as 12-24..01-06)"#),
        (#"{ "clips": [ { "file": "a.wav", "at": ["07:55@weekdays"] } ] }"#, #"clips[0].at[0]: "07:55@weekdays": "weekdays" is not a day or a range of days (expected mon, tue, wed, thu, fri, sat, sun, or a range such as mon-fri)"#),
        (#"{ "clips": [ { "file": "a.wav", "at": [] } ] }"#, #"clips[0].at: is empty: give 1 to 100 times (such as ["07:55@mon-fri", "*:00", "sunset-15m"]), or leave it out"#),
        (#"{ "clips": [ { "file": "a.wav", "at": [ { "time": "*:5" } ] } ] }"#, #"clips[0].at[0].time: "*:5": after *: come two digits for the minute of every hour, such as *:00 or *:30"#),
        (#"{ "clips": [ { "file": "a.wav", "at": [ { "except": ["holidays"] } ] } ] }"#, #"clips[0].at[0].time: missing (expected a time such as "07:55@mon-fri")"#),
        (#"{ "clips": [ { "file": "a.wav", "at": ["sunset@fri"] } ] }"#, #"clips[0].at[0]: a sun time needs the session's location: add "location": {"latitude": 52.37, "longitude": 4.89} with your own place (degrees north and east; a map shows them)"#),
        (#"{ "volume": 0.9, "maxVolume": 0.5, "clips": [ { "file": "a.wav" } ] }"#, "volume: 0.9 is above maxVolume (0.5); lower it, or raise maxVolume"),
        (#"{ "maxVolume": 1.5, "clips": [ { "file": "a.wav" } ] }"#, "maxVolume: 1.5 is out of range (expected 0 to 1)"),
        (#"{ "volume": [ { "from": "07:00", "level": 0.9 } ], "maxVolume": 0.5, "clips": [ { "file": "a.wav" } ] }"#, "volume[0].level: 0.9 is above maxVolume (0.5); lower it, or raise maxVolume"),
        (#"{ "volume": [ { "from": "07:00", "level": 1.2 } ], "clips": [ { "file": "a.wav" } ] }"#, "volume[0].level: 1.2 is out of range (expected 0 to 1)"),
        (#"{ "volume": [ { "from": "07:00" } ], "clips": [ { "file": "a.wav" } ] }"#, "volume[0].level: missing (expected a volume from 0 to 1, such as 0.8)"),
        (#"{ "volume": [ { "from": "7 am", "level": 0.5 } ], "clips": [ { "file": "a.wav" } ] }"#, #"volume[0].from: "7 am" is not a time (expected HH:MM such as 07:55, or sunrise, sunset, dawn or dusk with an optional offset such as sunset-15m)"#),
        (#"{ "volume": [ { "from": "07:00", "level": 0.5 }, { "from": "07:00", "level": 0.2 } ], "clips": [ { "file": "a.wav" } ] }"#, "volume[1].from: 07:00 is also the time of volume[0]; each step needs its own time"),
        (#"{ "volume": [ { "from": "dusk", "level": 0.5 } ], "clips": [ { "file": "a.wav" } ] }"#, #"volume[0].from: a sun time needs the session's location: add "location": {"latitude": 52.37, "longitude": 4.89} with your own place (degrees north and east; a map shows them)"#),
        (#"{ "volume": [ { "from": "07:00", "level": 0.5, "ramp": "5s" } ], "clips": [ { "file": "a.wav" } ] }"#, "volume[0].ramp: unknown key"),
        (#"{ "atGrace": "2h", "clips": [ { "file": "a.wav" } ] }"#, #"atGrace: "2h" is out of range (0s to 1h: how late an at time may still play after a short outage)"#),
        (#"{ "holidays": "12-25", "clips": [ { "file": "a.wav" } ] }"#, #"holidays: "12-25" is not a list of 1 to 400 dates (such as ["12-24..01-06", "2026-04-05"])"#),
        (#"{ "activeHours": [ { "from": "sunset", "to": "sunset" } ], "location": { "latitude": 1, "longitude": 1 }, "clips": [ { "file": "a.wav" } ] }"#, "activeHours[0]: from and to are both sunset: the window is empty"),
        (#"{ "clips": [ { "file": "a.wav", "windows": [ { "from": "10:00", "to": "11:00", "days": [] } ] } ] }"#, #"clips[0].windows[0].days: a list is not a non-empty list of days such as ["mon", "tue"]"#),
        (#"{ "clips": [ { "file": "a.wav", "weight": 1.5 } ] }"#, "clips[0].weight: 1.5 is not a whole number from 1 to 1000"),
        (#"{ "clips": [ { "file": "a.wav", "gain": 40 } ] }"#, "clips[0].gain: 40 dB is out of range (expected -60 to 20)"),
        (#"{ "clips": [ { "file": "a.wav" } ], "duration": "soon" }"#, #"duration: "soon" is not a duration (expected e.g. "45s", "3m", "1h30m" or a number of seconds)"#),
        (#"{ "clips": [ { "file": "a.wav" } ], "duration": 0 }"#, "duration: must be longer than 0s (leave it out to run until stopped)"),
        (#"{ "clips": [ { "file": "a.wav" } ], "version": 2 }"#, "version: 2 is not a format this jukeboxd reads (expected 1)"),
        (#"{ "clips": [ { "file": "a.wav" } ], "clipsDirectory": "/nonexistent/folder" }"#, #"clipsDirectory: "/nonexistent/folder" is not a folder"#),
        (#"{ "clips": [ { "file": "a.wav" } ], "leadIn": "1 minute" }"#, #"leadIn: "1 minute" is not a duration (expected e.g. "45s", "3m", "1h30m" or a number of seconds)"#),
        (#"{ "clips": [ { "file": "a.wav" } ], "leadIn": "20s" }"#, #"leadIn: "20s" is too long (at most 10s; about 1s wakes most receivers)"#),
        (#"{ "clips": [ { "file": "a.wav" } ], "fade": 2 }"#, "fade: 2 is too long (at most 500ms; a few ms is enough to stop a click)"),
        (#"{ "clips": [ { "file": "a.wav" } ], "keepDeviceOpen": true }"#, #"keepDeviceOpen: true is not "idle" or "always""#),
        (#"{ "clips": [ { "file": "a.wav" } ], "keepDeviceOpen": "never" }"#, #"keepDeviceOpen: "never" is not "idle" or "always""#),
        (#"{ "clips": [ { "file": "a.wav" } ], "leadin": 1 }"#, #"leadin: unknown key (did you mean "leadIn"?)"#),
        (#"{ "clips": [ { "file": "a.wav", "Title": "x" } ] }"#, #"clips[0].Title: unknown key (did you mean "title"?)"#),
        (#"{ "output": { "device": "hw:0" }, "clips": [ { "file": "a.wav" } ] }"#, #"output.type: missing (expected "alsa" or "snapcast")"#),
        (#"{ "output": { "type": "pipe", "device": "x" }, "clips": [ { "file": "a.wav" } ] }"#, #"output.type: "pipe" is not an output type (expected "alsa" or "snapcast")"#),
        (#"{ "output": { "type": "snapcast" }, "clips": [ { "file": "a.wav" } ] }"#, #"output.pipe: missing (the FIFO snapserver's pipe:// source reads, such as "/run/snapserver/jukeboxd")"#),
        (#"{ "output": { "type": "snapcast", "pipe": "/p", "device": "hw:0" }, "clips": [ { "file": "a.wav" } ] }"#, "output.device: is not used by a Snapcast output"),
        (#"{ "output": { "type": "alsa", "pipe": "/p" }, "clips": [ { "file": "a.wav" } ] }"#, "output.pipe: is not used by an ALSA output"),
        (#"{ "output": { "type": "snapcast", "pipe": "/p", "format": "48000:16" }, "clips": [ { "file": "a.wav" } ] }"#, #"output.format: "48000:16" is not RATE:BITS:CHANNELS, such as "48000:16:2""#),
        (#"{ "output": { "type": "snapcast", "pipe": "/p", "format": "7999:16:2" }, "clips": [ { "file": "a.wav" } ] }"#, #"output.format: "7999:16:2" has a rate of 7999 Hz (from 8000 to 384000)"#),
        (#"{ "output": { "type": "snapcast", "pipe": "/p", "format": "384001:16:2" }, "clips": [ { "file": "a.wav" } ] }"#, #"output.format: "384001:16:2" has a rate of 384001 Hz (from 8000 to 384000)"#),
        (#"{ "output": { "type": "snapcast", "pipe": "/p", "format": "48000:8:2" }, "clips": [ { "file": "a.wav" } ] }"#, #"output.format: "48000:8:2" has 8 bits (16, 24 or 32)"#),
        (#"{ "output": { "type": "snapcast", "pipe": "/p", "format": "48000:16:9" }, "clips": [ { "file": "a.wav" } ] }"#, #"output.format: "48000:16:9" has 9 channels (1 to 8)"#),
        (#"{ "output": { "type": "alsa" }, "device": "hw:0", "clips": [ { "file": "a.wav" } ] }"#, #"output: give either "output" or "device", not both ("device" is shorthand for an ALSA output)"#),
        (#"{ "output": { "type": "alsa", "devcie": "x" }, "clips": [ { "file": "a.wav" } ] }"#, #"output.devcie: unknown key (did you mean "device"?)"#),
    ])
    func singleProblem(text: String, expected: String) {
        #expect(problems(text) == ["/srv/jukebox/session.json:1: " + expected])
    }

    @Test func anOutputSectionOrTheDeviceShorthandNameTheALSAOutput() throws {
        #expect(try SessionLoader.parse(Array(#"{ "output": { "type": "alsa", "device": "plughw:CARD=Device,DEV=0" }, "clips": [ { "file": "a.wav" } ] }"#.utf8), path: "/s.json").output
            == .alsa(device: "plughw:CARD=Device,DEV=0"))
        #expect(try SessionLoader.parse(Array(#"{ "device": "hw:1,0", "clips": [ { "file": "a.wav" } ] }"#.utf8), path: "/s.json").output == .alsa(device: "hw:1,0"))
        #expect(try SessionLoader.parse(Array(#"{ "output": { "type": "alsa" }, "clips": [ { "file": "a.wav" } ] }"#.utf8), path: "/s.json").output == .alsa(device: "default"))
    }

    @Test(arguments: [
        (#""tts": { "command": ["espeak-ng", "-w", "{out}"], "timeLimit": "999ms" }"#, #"tts.timeLimit: "999ms" is out of range (1s to 5m)"#),
        (#""tts": { "command": ["espeak-ng", "-w", "{out}"], "timeLimit": "5m1s" }"#, #"tts.timeLimit: "5m1s" is out of range (1s to 5m)"#),
        (#""tts": ["espeak-ng", "{text}"]"#, #"tts.command: has no "{out}", the WAV file the engine is to write (such as ["espeak-ng", "-w", "{out}", "--stdin"]; no shell is run)"#),
        (#""tts": ["{text}", "{out}"]"#, #"tts.command: the program, "{text}", cannot be a placeholder"#),
        (#""tts": []"#, #"tts.command: is empty: give 1 to 64 words, the program first (such as ["espeak-ng", "-w", "{out}", "--stdin"]; no shell is run), or leave it out"#),
        (#""tts": "espeak-ng -w {out}""#, #"tts: "espeak-ng -w {out}" is not an object"#),
        (#""tts": { "command": ["espeak-ng", ""] }"#, #"tts.command[1]: "" is not a word of 1 to 4096 bytes"#),
        (#""tts": { "comand": ["espeak-ng"] }"#, #"tts.comand: unknown key (did you mean "command"?)"#),
    ])
    func aSpeechEngineThatCannotRunIsRefusedByField(_ tts: String, _ expected: String) {
        #expect(problems(#"{ "clips": [ { "file": "a.wav" } ], "# + tts + " }") == ["/srv/jukebox/session.json:1: " + expected])
    }

    @Test func aSpeechEngineIsAnArgumentListWithItsTimeLimit() throws {
        #expect(try load(#"{ "clips": [ { "file": "a.wav" } ] }"#).speech == SpeechSettings())
        let piper = try load(#"{ "clips": [ { "file": "a.wav" } ], "tts": { "command": ["piper", "--output_file", "{out}"], "timeLimit": "5m" } }"#).speech
        #expect(piper == SpeechSettings(command: ["piper", "--output_file", "{out}"], timeLimit: .seconds(300)))
        let shorthand = try load(#"{ "clips": [ { "file": "a.wav" } ], "tts": ["espeak-ng", "-w", "{out}", "{text}"] }"#).speech
        #expect(shorthand.command == ["espeak-ng", "-w", "{out}", "{text}"] && shorthand.timeLimit == SpeechSettings.defaultTimeLimit)
        #expect(try load(#"{ "clips": [ { "file": "a.wav" } ], "tts": { "timeLimit": "1s" } }"#).speech.timeLimit == .seconds(1))
        let longest = "[" + Array(repeating: #""{out}""#, count: 64).joined(separator: ", ").replacingOccurrences(of: #"^"\{out\}""#, with: #""e""#, options: .regularExpression) + "]"
        #expect(try load(#"{ "clips": [ { "file": "a.wav" } ], "tts": "# + longest + " }").speech.command.count == 64)
        let tooMany = longest.dropLast() + #", "x"]"#
        #expect(problems(#"{ "clips": [ { "file": "a.wav" } ], "tts": "# + tooMany + " }").first?.contains("tts.command: ") == true)
    }

    @Test func aSnapcastOutputNamesItsPipeAndFormat() throws {
        let text = #"{ "output": { "type": "snapcast", "pipe": "snapfifo", "format": "44100:24:1" }, "clips": [ { "file": "a.wav" } ] }"#
        let output = try SessionLoader.parse(Array(text.utf8), path: "/srv/s.json").output
        #expect(output == .snapcast(pipe: "/srv/snapfifo", format: StreamFormat(sampleRate: 44_100, bits: 24, channels: 1)))
        #expect(output.description == "snapcast:/srv/snapfifo (44100:24:1)")
        let plain = #"{ "output": { "type": "snapcast", "pipe": "/run/snapserver/jukeboxd" }, "clips": [ { "file": "a.wav" } ] }"#
        #expect(try SessionLoader.parse(Array(plain.utf8), path: "/s.json").output == .snapcast(pipe: "/run/snapserver/jukeboxd", format: .snapcastDefault))
        for (edge, ok) in [("8000:16:1", true), ("384000:32:8", true), ("48000:24:2", true)] {
            #expect(((try? StreamFormat.parse(edge).get()) != nil) == ok, "\(edge)")
        }
        #expect(OutputConfig.parse(commandLine: "snapcast:/run/snapserver/jukeboxd") == .snapcast(pipe: "/run/snapserver/jukeboxd", format: .snapcastDefault))
        #expect(OutputConfig.parse(commandLine: "alsa:hw:1,0") == .alsa(device: "hw:1,0"))
        #expect(OutputConfig.parse(commandLine: "snapcast:") == nil && OutputConfig.parse(commandLine: "pulse") == nil)
    }

    @Test func notJSONSaysWhereWithLineAndColumn() {
        #expect(problems("{\n  \"clips\": [\n    { \"file\": \"a.wav\" }\n    { \"file\": \"b.wav\" }\n  ]\n}") == [
            "/srv/jukebox/session.json:4:5: not valid JSON: expected ',' or ']'",
        ])
        #expect(problems("clips: a.wav") == ["/srv/jukebox/session.json:1:1: not valid JSON: unexpected character"])
        #expect(problems("{ \"clips\": [ ") == ["/srv/jukebox/session.json:1:14: not valid JSON: unexpected end of file, expected a value"])
    }

    @Test func missingFileIsUnreadableNotInvalid() {
        #expect(throws: SessionLoadError(kind: .unreadable, problems: ["/nonexistent/session.json: no such file"])) {
            try SessionLoader.load(path: "/nonexistent/session.json")
        }
        #expect(throws: SessionLoadError(kind: .unreadable, problems: ["/: is a folder, not a file"])) {
            try SessionLoader.load(path: "/")
        }
        #expect(SessionLoadError(kind: .unreadable, problems: []).exitCode == 66)
    }
}

@Suite("JSON parser", .timeLimit(.minutes(1)))
struct JSONParserTests {
    /// Where `bytes` stops being JSON, or nil if it is JSON.
    func firstError(in bytes: [UInt8]) -> JSONParser.Failure? {
        do throws(JSONParser.Failure) {
            _ = try JSONParser.parse(bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test func valuesAreParsedWithEscapesAndUnicode() throws {
        let text = #"{"a": [1, -2.5e3, true, false, null], "s": "q\"b\\s\/n\nt\tu\u00e9 \ud83c\udfb5 ü", "o": {}, "e": []}"#
        let value = try JSONParser.parse(Array(text.utf8))
        #expect(value == .object([
            "a": .array([.number(1), .number(-2500), .bool(true), .bool(false), .null]),
            "s": .string("q\"b\\s/n\nt\tué 🎵 ü"), "o": .object([:]), "e": .array([]),
        ]))
    }

    @Test func badStringsAreRefusedWithTheirPlace() {
        #expect(firstError(in: Array(#""\x""#.utf8))?.reason == "invalid escape in a string")
        #expect(firstError(in: Array(#""\ud83c""#.utf8))?.reason == "invalid escape in a string")
        #expect(firstError(in: Array(#""\u12""#.utf8))?.reason == "invalid escape in a string")
        #expect(firstError(in: [0x22, 0xFF, 0xFE, 0x22])?.reason == "a string is not valid UTF-8")
        #expect(firstError(in: Array("[".utf8))?.reason == "unexpected end of file, expected a value")
        #expect(firstError(in: Array(String(repeating: "[", count: 600).utf8))?.reason == "nesting is too deep")
        // Valid JSON, but no number a field can hold: said where it is, not further on.
        #expect(firstError(in: Array(#"{"volume": 1e999}"#.utf8))?.description == "the number 1e999 is too large at line 1, column 12")
        #expect(firstError(in: Array("[-1e309]".utf8))?.reason == "the number -1e309 is too large")
        #expect(firstError(in: Array("[1e308]".utf8)) == nil)
    }

    @Test func validDocumentsHaveNoError() {
        for text in [#"{"a": [1, -2.5e3, true, false, null, "x\"y\u00e9"]}"#, "  []  ", #""s""#, "0"] {
            #expect(firstError(in: Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func positionsCountLinesAndCharacters() {
        let failure = firstError(in: Array("{\n \"é\": 01 }".utf8))
        #expect(failure?.description == "invalid number at line 2, column 7")
        #expect(firstError(in: Array("{\"a\": 1} x".utf8))?.reason == "unexpected text after the end of the document")
        #expect(firstError(in: Array("{\"a\" 1}".utf8))?.reason == "expected ':' after the key")
        #expect(firstError(in: Array("\"open".utf8))?.reason == "unexpected end of file inside a string")
    }

    @Test func linesAreFoundByFieldPath() {
        let text = "\n{ \"a\": 1,\n  \"b\": [\n    { \"c\": \"x\" },\n    [ 2,\n 3 ] ] }"
        #expect(JSONParser.lines(in: Array(text.utf8)) == [
            "": 2, "a": 2, "b": 3, "b[0]": 4, "b[0].c": 4, "b[1]": 5, "b[1][0]": 5, "b[1][1]": 6,
        ])
        #expect(JSONParser.lines(in: Array("{ \"a\": ".utf8)).isEmpty, "nothing for text that is not JSON")
    }
}

extension SessionLoaderTests {
    @Test func hugeDurationsAreProblemsNotCrashes() {
        let found = problems("""
            { "interval": { "min": "9999999999999h", "max": "2500000000000h2500000000000h" },
              "duration": 1e300, "leadIn": "99999999999999999999s", "clips": [ { "file": "a.wav" } ] }
            """)
        #expect(found == [
            #"/srv/jukebox/session.json:1: interval.min: "9999999999999h" is too long (at most 10 years)"#,
            #"/srv/jukebox/session.json:1: interval.max: "2500000000000h2500000000000h" is too long (at most 10 years)"#,
            #"/srv/jukebox/session.json:2: duration: 1e+300 is too long (at most 10 years)"#,
            #"/srv/jukebox/session.json:2: leadIn: "99999999999999999999s" is too long (at most 10 years)"#,
        ])
    }

    @Test func minLongerThanMaxIsWordedWithBothDurations() {
        #expect(problems(#"{ "interval": { "min": "87600h", "max": "1s" }, "clips": [ { "file": "a.wav" } ] }"#)
            == [#"/srv/jukebox/session.json:1: interval: min (87600h) is longer than max (1s)"#])
    }
}

@Suite("Durations", .timeLimit(.minutes(1)))
struct DurationTextTests {
    @Test(arguments: [
        ("45s", Duration.seconds(45)), ("3m", .seconds(180)), ("1h30m", .seconds(5400)), ("250ms", .milliseconds(250)),
        ("1.5s", .milliseconds(1500)), ("90", .seconds(90)), ("2h 5m 3s", .seconds(7503)),
    ])
    func parses(text: String, expected: Duration) {
        #expect(DurationText.parse(text) == expected)
    }

    @Test(arguments: ["", "s", "5x", "-3s", "m5", "1h-2m"])
    func rejects(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    /// Huge values used to trap when turned into milliseconds (`--check` died with SIGILL, and
    /// `jukebox reload` of such a file killed the running daemon).
    @Test(arguments: ["9999999999999h", "2500000000000h2500000000000h", "3651d", "87601h", "315360001", "1000000000000000000000s", "5256001m"])
    func refusesDurationsOverTenYears(text: String) {
        #expect(DurationText.parse(text) == nil)
        #expect(DurationText.check(text) == .failure(text == "3651d" ? .notADuration : .tooLong))
    }

    @Test func acceptsUpToTenYears() {
        #expect(DurationText.parse("87600h") == .seconds(315_360_000))
        #expect(DurationText.format(.seconds(315_360_000)) == "87600h")
        #expect(DurationText.fromSeconds(315_360_000) == .seconds(315_360_000))
        #expect(DurationText.fromSeconds(315_360_000.5) == nil)
    }

    @Test func formatsShortly() {
        #expect(DurationText.format(.seconds(5400)) == "1h30m")
        #expect(DurationText.format(.seconds(45)) == "45s")
        #expect(DurationText.format(.milliseconds(2340)) == "2.3s")
        #expect(DurationText.format(.seconds(3600)) == "1h")
    }
}

/// What a session (or state) file may be before it is read at all.
@Suite("Session file limits", .timeLimit(.minutes(1)))
struct SessionFileLimitTests {
    let folder: TemporaryDirectory
    init() throws { folder = try TemporaryDirectory() }

    func unreadable(_ path: String) -> [String] {
        do {
            _ = try SessionLoader.load(path: path)
            return []
        } catch {
            #expect(error.kind == .unreadable)
            return error.problems
        }
    }

    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let path = folder.file("fifo.json")
        #expect(mkfifo(path, 0o600) == 0)
        #expect(unreadable(path) == ["\(path): not a regular file (a FIFO, socket or device cannot be read as one)"])
    }

    @Test func aDeviceIsRefused() {
        #expect(unreadable("/dev/zero") == ["/dev/zero: not a regular file (a FIFO, socket or device cannot be read as one)"])
    }

    @Test func sixteenMegabytesIsTheLimit() throws {
        let clip = Array(#"{ "clips": [ { "file": "a.wav" } ] }"#.utf8)
        let atLimit = clip + Array(repeating: UInt8(ascii: " "), count: SessionLoader.maxFileSize - clip.count)
        let path = try folder.write("big.json", atLimit)
        #expect(throws: Never.self) { try SessionLoader.load(path: path) }
        let over = try folder.write("bigger.json", atLimit + [0x20])
        #expect(unreadable(over) == ["\(over): too large (over 16 MB); is it the right file?"])
    }

    @Test func aFolderIsRefused() {
        #expect(unreadable(folder.path) == ["\(folder.path): is a folder, not a file"])
    }

    @Test func aByteOrderMarkIsAccepted() throws {
        let path = try folder.write("bom.json", [0xEF, 0xBB, 0xBF] + Array(#"{ "clips": [ { "file": "a.wav" } ] }"#.utf8))
        #expect(try SessionLoader.load(path: path).clips.map(\.id) == ["a"])
    }

    @Test func duplicateKeysAreReportedWithTheirPlace() throws {
        let path = try folder.write("dup.json", text: """
            { "clips": [ { "file": "a.wav" } ],
              "volume": 0.2,
              "volume": 1 }
            """)
        do throws(SessionLoadError) {
            _ = try SessionLoader.load(path: path)
            Issue.record("loaded a session with a duplicate key")
        } catch {
            #expect(error.problems == [#"\#(path):3:3: not valid JSON: duplicate key "volume""#])
        }
    }

    @Test func aStateFileThatIsAFIFOIsSetAsideNotWaitedOn() async throws {
        let path = folder.file("state.json")
        #expect(mkfifo(path, 0o600) == 0)
        guard case .corrupt(let movedTo, let reason) = await StateFile(path: path).load() else {
            Issue.record("a FIFO state file was not set aside")
            return
        }
        #expect(reason == "not a regular file (a FIFO, socket or device cannot be read as one)")
        #expect(movedTo.hasPrefix(path + ".corrupt-"))
    }
}
