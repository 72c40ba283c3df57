import Foundation
import JukeboxProtocol
import JukeboxTestSupport
import Subprocess
import Synchronization
import Testing

/// Session editing and uploads over the real socket, with the built binaries.
@Suite("Session editing and uploads", .timeLimit(.minutes(2)))
struct SessionEditingTests: DaemonSuite {
    let folder: TemporaryDirectory
    /// Files of the person running `jukebox`, outside the clips folder.
    let home: TemporaryDirectory
    let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 8000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
    var socket: String { folder.file("c.sock") }
    var session: String { folder.file("s.json") }

    init() throws {
        folder = try TemporaryDirectory()
        home = try TemporaryDirectory()
        try folder.write("water.wav", tone)
        try folder.write("s.json", text: """
            {
              "interval": { "min": "1h", "max": "1h" },
              "maxUploadSize": 200000,
              "clips": [ { "file": "water.wav" } ]
            }

            """)
    }

    var arguments: [String] { [session, "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }

    /// Files the daemon left in the clips folder besides the session, its backup and the clips.
    func strays() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".upload-") || $0.hasSuffix(".tmp") }.sorted()
    }

    static var ffmpeg: String? { ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) } }

    /// Makes `name` in `home` from the test tone with ffmpeg (`codec` as ffmpeg names it).
    func encode(_ name: String, codec: [String]) async throws {
        let ffmpeg = try #require(Self.ffmpeg, "ffmpeg is needed to make the file (scripts/test.sh installs it)")
        try home.write("tone.wav", tone)
        let made = try await Subprocess.run(
            .path(.init(ffmpeg)), arguments: Arguments(["-nostdin", "-loglevel", "error", "-i", home.file("tone.wav")] + codec + [home.file(name)]),
            platformOptions: TestProcesses.options, output: .discarded, error: .string(limit: 4096))
        #expect(made.terminationStatus.isSuccess, "\(made.standardError)")
    }

    @Test(.enabled(if: ffmpeg != nil, "ffmpeg is not installed: the FLAC and Ogg files cannot be made (scripts/test.sh installs it)"))
    func addingAWavAFlacAndAnOggMakesEachAClip() async throws {
        try home.write("wav tone.wav", tone)
        try await encode("flac-tone.flac", codec: ["-c:a", "flac"])
        try await encode("ogg-tone.ogg", codec: ["-c:a", "libvorbis"])
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            let added = try await jukebox(["add", home.file("wav tone.wav"), home.file("flac-tone.flac"), home.file("ogg-tone.ogg")])
            let clips = try await jukebox(["--json", "clips"])
            return (added, clips)
        }
        let (added, clips) = run.result
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("added wav tone from \(home.file("wav tone.wav")) as wav tone.wav"), "\(added.stdout)")
        #expect(try folder.read("wav tone.wav") == tone, "the bytes arrived whole")
        for name in ["flac-tone.flac", "ogg-tone.ogg"] { #expect(FileManager.default.fileExists(atPath: folder.file(name)), "\(name)") }
        let result = try JSONDecoder().decode(ClipsResult.self, from: Data(clips.stdout.utf8))
        #expect(result.clips.map(\.id) == ["water", "wav tone", "flac-tone", "ogg-tone"])
        #expect(result.clips.allSatisfy { $0.problem == nil && ($0.duration ?? 0) > 0.9 }, "\(result.clips)")
        #expect(try strays().isEmpty)
    }

    /// A phone's recording (M4A/AAC) is converted to FLAC with ffmpeg.
    @Test(.enabled(if: ffmpeg != nil, "ffmpeg is not installed: M4A cannot be made or converted (scripts/test.sh installs it)"))
    func aPhoneRecordingIsConverted() async throws {
        try await encode("voice memo.m4a", codec: ["-c:a", "aac"])
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            try await jukebox(["add", home.file("voice memo.m4a"), "--title", "Memo"])
        }
        #expect(run.result.status == 0, "\(run.result.stderr)")
        #expect(run.result.stdout.contains("as voice memo.flac"), "\(run.result.stdout)")
        #expect(try Array(folder.read("voice memo.flac").prefix(4)) == Array("fLaC".utf8))
        #expect(!FileManager.default.fileExists(atPath: folder.file("voice memo.m4a")))
        #expect(try String(decoding: folder.read("s.json"), as: UTF8.self).contains(#"{ "file": "voice memo.flac", "title": "Memo" }"#))
        #expect(try strays().isEmpty)
    }

    /// An upload that names other files (an HLS playlist sent as an M4A) is refused without
    /// ffmpeg reading them: a private file does not become a clip, and the refusal is the same
    /// whether the file it names exists or not, so it tells nothing about what is there.
    @Test(.enabled(if: ffmpeg != nil, "ffmpeg is not installed: the uploads cannot be converted (scripts/test.sh installs it)"))
    func anUploadThatNamesOtherFilesReadsNone() async throws {
        try await encode("diary.aac", codec: ["-c:a", "aac"])
        try FileManager.default.createDirectory(atPath: home.file("private"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.moveItem(atPath: home.file("diary.aac"), toPath: home.file("private/diary.aac"))
        func playlist(naming file: String) -> String { "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1,\n\(file)\n#EXT-X-ENDLIST\n" }
        try home.write("notes.m4a", text: playlist(naming: home.file("private/diary.aac")))
        try home.write("other.m4a", text: playlist(naming: home.file("private/missing.aac")))
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            (try await jukebox(["add", home.file("notes.m4a")]), try await jukebox(["add", home.file("other.m4a")]))
        }
        let (present, missing) = run.result
        #expect(present.status == 1, "\(present)")
        #expect(missing.status == 1, "\(missing)")
        #expect(!present.stderr.contains("diary"), "\(present.stderr)")
        #expect(present.stderr.replacing("notes", with: "NAME") == missing.stderr.replacing("other", with: "NAME"), "\(present.stderr)\n\(missing.stderr)")
        #expect(present.stderr.contains("converting it with ffmpeg failed"), "\(present.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("notes") || $0.hasPrefix("other") }.isEmpty)
        #expect(try strays().isEmpty)
        #expect(!(try String(decoding: folder.read("s.json"), as: UTF8.self).contains("notes")))
    }

    /// A 2.9 MB WebM of 1 h was stored as a 230 MB FLAC: what ffmpeg writes is bounded by the
    /// session's maxUploadLength and maxUploadSize, and what goes past them is refused and
    /// leaves nothing.
    @Test(.enabled(if: ffmpeg != nil, "ffmpeg is not installed: the WebM files cannot be made or converted (scripts/test.sh installs it)"))
    func aConvertedUploadIsBoundedByTheSessionsLengthAndSize() async throws {
        let ffmpeg = try #require(Self.ffmpeg)
        // Silence at 8 kHz, which FLAC keeps small, past the length; noise, which it cannot, within it.
        for (name, source, codec) in [("long.m4a", "aevalsrc=0:d=6:s=8000", ["-c:a", "aac"]), ("short.webm", "anoisesrc=d=2:r=48000:a=0.5", ["-c:a", "libopus", "-b:a", "12k"])] {
            let made = try await Subprocess.run(
                .path(.init(ffmpeg)),
                arguments: Arguments(["-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", source] + codec + [home.file(name)]),
                platformOptions: TestProcesses.options, output: .discarded, error: .string(limit: 4096))
            #expect(made.terminationStatus.isSuccess, "\(made.standardError)")
        }
        let webm = try #require(try? home.read("short.webm").count)
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "maxUploadSize": 60000, "maxUploadLength": "5s", "clips": [ { "file": "water.wav" } ] }
            """)
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            (try await jukebox(["add", home.file("long.m4a")]), try await jukebox(["add", home.file("short.webm")]))
        }
        let (long, short) = run.result
        #expect(long.status == 1)
        #expect(long.stderr.contains("converted with ffmpeg, long.m4a is longer than the 5s accepted (the session's maxUploadLength; raise it to add a longer clip)"), "\(long.stderr)")
        #expect(webm < 60000, "the WebM itself is within maxUploadSize: \(webm) bytes")
        #expect(short.status == 1)
        #expect(short.stderr.contains("short.webm, converted to FLAC, is larger than the 60000 bytes accepted (the session's maxUploadSize); nothing was kept"), "\(short.stderr)")
        #expect(try strays().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".flac") || $0.hasSuffix(".webm") || $0.hasSuffix(".m4a") }.isEmpty)
    }

    /// Refused uploads leave no file: not audio, too large, and cut off halfway.
    @Test func refusedAndBrokenUploadsLeaveNothing() async throws {
        try home.write("notes.wav", Array("these are notes, not audio".utf8))
        try home.write("big.wav", [UInt8](repeating: 0, count: 200_001))
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] log in
            let notAudio = try await jukebox(["--json", "add", home.file("notes.wav")])
            let tooLarge = try await jukebox(["add", home.file("big.wav")])
            // Half a file, then the connection closes.
            let connection = try #require(RawConnection(socket))
            let answer = connection.call(#"{"jsonrpc":"2.0","id":1,"method":"upload","params":{"name":"cut.wav","size":16044}}"#)
            #expect(answer == #"{"id":1,"jsonrpc":"2.0","result":{"size":16044,"upload":"u1"}}"#)
            connection.send(Array(tone.prefix(8000)))
            connection.close()
            #expect(await log.waitFor("the upload of cut.wav ended after 8000 of its 16044 bytes; nothing of it was kept"))
            return (notAudio, tooLarge)
        }
        let (notAudio, tooLarge) = run.result
        #expect(notAudio.status == 1)
        #expect(notAudio.stdout.contains(#""reason":"unplayable-clip""#), "\(notAudio.stdout)")
        #expect(tooLarge.status == 1)
        #expect(tooLarge.stderr == "jukebox: big.wav is 200001 bytes, more than the 200000 an upload may be (the session's maxUploadSize)\n")
        #expect(try strays().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".wav") } == ["water.wav"])
    }

    /// A name is made safe and never overwrites: `../` cannot leave the folder, and a name
    /// that is taken gets `-2`.
    @Test func uploadNamesAreMadeSafeAndNeverOverwrite() async throws {
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            var stored: [String] = []
            for name in ["../../escape.wav", "water.wav", ".hidden.wav"] {
                let connection = try #require(RawConnection(socket))
                defer { connection.close() }
                _ = connection.call(#"{"jsonrpc":"2.0","id":1,"method":"upload","params":{"name":"\#(name)","size":\#(tone.count)}}"#)
                connection.send(tone)
                let added = connection.call(#"{"jsonrpc":"2.0","id":2,"method":"addClip","params":{"upload":"u1","id":"clip\#(stored.count)"}}"#) ?? ""
                stored.append(try JSONDecoder().decode(Response.self, from: Data(added.utf8)).result.clip.file)
            }
            return stored
        }
        #expect(run.result == ["escape.wav", "water-2.wav", "hidden.wav"])
        #expect(!FileManager.default.fileExists(atPath: URL(fileURLWithPath: folder.path).deletingLastPathComponent().appendingPathComponent("escape.wav").path))
        #expect(try folder.read("water.wav") == tone, "the old water.wav is untouched")
    }

    /// `" .s.json.bak"` was stored as the hidden `.s.json.bak`, which the same request's
    /// session write then replaced with the session's backup, and the answer was a clip that
    /// could not play. A name never starts with a dot or a space, however they are mixed, and
    /// keeps no character that turns text round or breaks a line.
    @Test func anUploadNameIsNeverHiddenOrTurnedRound() async throws {
        let names = [" .s.json.bak", " .s.json.tmp", ". . .three.wav", "evil\u{202E}vaw.wav", "a\u{85}b\u{2028}c.wav"]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            var stored: [String] = []
            for (index, name) in names.enumerated() {
                let connection = try #require(RawConnection(socket))
                defer { connection.close() }
                let escaped = String(data: try JSONEncoder().encode(name), encoding: .utf8)!
                _ = connection.call(#"{"jsonrpc":"2.0","id":1,"method":"upload","params":{"name":\#(escaped),"size":\#(tone.count)}}"#)
                connection.send(tone)
                let added = connection.call(#"{"jsonrpc":"2.0","id":2,"method":"addClip","params":{"upload":"u1","id":"clip\#(index)"}}"#) ?? ""
                stored.append(try JSONDecoder().decode(Response.self, from: Data(added.utf8)).result.clip.file)
            }
            return stored
        }
        #expect(run.result == ["s.json.bak", "s.json.tmp", "three.wav", "evilvaw.wav", "abc.wav"])
        for name in run.result { #expect(try folder.read(name) == tone, "\(name) holds the upload") }
        let hidden = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { ($0.hasPrefix(".") || $0.hasPrefix(" ")) && !$0.hasPrefix(".state") }
        #expect(hidden == [".s.json.bak"], "only the session's own backup is hidden: \(hidden)")
        #expect(try folder.read(".s.json.bak").first == UInt8(ascii: "{"), "the backup is the session's")
    }

    /// `rec.ogg` after `rec.webm` (stored as `rec.flac`, clip `rec`) got "id already used";
    /// a name whose clip id is taken is passed over for a numbered one.
    @Test(.enabled(if: ffmpeg != nil, "ffmpeg is not installed: the WebM and Ogg files cannot be made (scripts/test.sh installs it)"))
    func aSecondRecordingOfTheSameNameGetsANumber() async throws {
        try await encode("rec.webm", codec: ["-c:a", "libopus"])
        try await encode("rec.ogg", codec: ["-c:a", "libvorbis"])
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            (try await jukebox(["add", home.file("rec.webm")]), try await jukebox(["add", home.file("rec.ogg")]), try await jukebox(["--json", "clips"]))
        }
        let (webm, ogg, clips) = run.result
        #expect(webm.status == 0 && webm.stdout.contains("as rec.flac"), "\(webm)")
        #expect(ogg.status == 0 && ogg.stdout.contains("as rec-2.ogg"), "\(ogg)")
        let result = try JSONDecoder().decode(ClipsResult.self, from: Data(clips.stdout.utf8))
        #expect(result.clips.map(\.id) == ["water", "rec", "rec-2"])
        #expect(try strays().isEmpty)
    }

    struct Response: Decodable {
        struct Result: Decodable { var clip: ClipInfo }
        var result: Result
    }

    /// A hand edit since the daemon read the file is never overwritten; after a reload the
    /// edit goes through and builds on it.
    @Test func aHandEditIsNotOverwritten() async throws {
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            let hand = try String(decoding: folder.read("s.json"), as: UTF8.self).replacingOccurrences(of: "\"1h\"", with: "\"2h\"")
            try folder.write("s.json", text: hand)
            let refused = try await jukebox(["--json", "schedule", "--every", "5m-10m"])
            let intact = try String(decoding: folder.read("s.json"), as: UTF8.self) == hand
            _ = try await jukebox(["reload"])
            let done = try await jukebox(["edit", "water", "--title", "Drink"])
            return (refused, intact, done)
        }
        let (refused, intact, done) = run.result
        #expect(refused.status == 1)
        #expect(refused.stdout.contains(#""reason":"session-changed-on-disk""#), "\(refused.stdout)")
        #expect(intact)
        #expect(done.status == 0, "\(done.stderr)")
        let text = try String(decoding: folder.read("s.json"), as: UTF8.self)
        #expect(text.contains(#""interval": { "min": "2h", "max": "2h" }"#) && text.contains(#""title": "Drink""#), "\(text)")
    }

    /// The schedule's fields from the command line: fixed times, dates, quiet hours with a sun
    /// time, a location and holidays; `jukebox session` shows them; a place that is not one
    /// is refused by the client, one out of range by jukeboxd, and neither changes the file.
    @Test func fixedTimesQuietHoursAndALocationFromTheCommandLine() async throws {
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            let edits = [
                try await jukebox(["schedule", "--quiet", "22:00-07:00", "--quiet", "sunset-30m..sunset", "--location", "52.37,4.89", "--holiday", "12-25", "--at-grace", "5m"]),
                try await jukebox(["edit", "water", "--at", "07:55@mon-fri", "--at", "*:00", "--except", "holidays", "--window", "sunrise+1h..12:00@mon,tue"]),
            ]
            let shown = try await jukebox(["session"]).stdout
            let before = try folder.read("s.json")
            let refused = [
                try await jukebox(["schedule", "--location", "north"]), try await jukebox(["schedule", "--location", "95,4"]),
                try await jukebox(["edit", "water", "--window", "sunset-30m-23:00"]),
            ]
            let unchanged = try folder.read("s.json") == before
            let cleared = try await jukebox(["edit", "water", "--no-at", "--every-day"])
            let stepped = try await jukebox(["schedule", "--volume", "07:00=0.8", "--volume", "sunset=0.4"])
            let steps = try await jukebox(["session"]).stdout
            return (edits, shown, refused, unchanged, cleared, stepped, steps)
        }
        let (edits, shown, refused, unchanged, cleared, stepped, steps) = run.result
        #expect(stepped.status == 0, "\(stepped.stderr)")
        #expect(steps.contains("\nvolume:    from 07:00 80, from sunset 40\n"), "\(steps)")
        #expect(edits.allSatisfy { $0.status == 0 }, "\(edits.map(\.stderr))")
        #expect(shown.contains("location:  52.37,4.89\nquiet:     22:00-07:00, sunset-30m..sunset\nholidays:  12-25\nat grace:  5m\n"), "\(shown)")
        #expect(shown.contains("  water  water.wav  sunrise+1h-12:00@mon,tue  at 07:55@mon-fri, *:00  except holidays"), "\(shown)")
        #expect(refused.map(\.status) == [64, 1, 64])
        #expect(refused[0].stderr.contains(#""north" is not a place: write degrees north and east, such as 52.37,4.89"#), "\(refused[0].stderr)")
        #expect(refused[1].stderr.contains("location.latitude: 95 is out of range"), "\(refused[1].stderr)")
        #expect(refused[2].stderr.contains("put .. between the ends, such as sunset-30m..23:00"), "\(refused[2].stderr)")
        #expect(unchanged)
        #expect(cleared.status == 0, "\(cleared.stderr)")
        let text = try String(decoding: folder.read("s.json"), as: UTF8.self)
        #expect(!text.contains(#""at""#) && !text.contains(#""except""#) && text.contains(#""quiet""#), "\(text)")
    }

    /// Two editors that read the same revision: the second to edit is refused.
    @Test func twoEditorsWithIfRevision() async throws {
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            let seen = try JSONDecoder().decode(SessionResult.self, from: Data(try await jukebox(["--json", "session"]).stdout.utf8)).revision
            let first = try await jukebox(["edit", "water", "--title", "One", "--if-revision", seen])
            let second = try await jukebox(["--json", "edit", "water", "--title", "Two", "--if-revision", seen])
            return (first, second)
        }
        let (first, second) = run.result
        #expect(first.status == 0, "\(first.stderr)")
        #expect(second.status == 1)
        #expect(second.stdout.contains(#""reason":"revision-mismatch""#), "\(second.stdout)")
        #expect(try String(decoding: folder.read("s.json"), as: UTF8.self).contains(#""title": "One""#))
    }

    /// `kill -9` at any moment of an edit leaves the old file or the new one, never a mix.
    @Test func killedDuringAnEditTheFileIsOldOrNew() async throws {
        let old = try folder.read("s.json")
        var seen: Set<String> = []
        for attempt in 0..<8 {
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", stopWith: .kill) { [self] _ in
                let connection = try #require(RawConnection(socket))
                connection.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"updateSchedule","params":{"name":"edited"}}"#.utf8) + [10])
                // Killed at a different moment each time, from at once to after the answer.
                if attempt > 0 { usleep(useconds_t(attempt * 400)) }
                connection.close()
            }
            _ = run
            let now = try folder.read("s.json")
            let text = String(decoding: now, as: UTF8.self)
            #expect(now == old || text.contains(#""name": "edited""#), "\(text)")
            #expect((try? JSONSerialization.jsonObject(with: Data(now))) != nil, "always a whole JSON document")
            seen.insert(now == old ? "old" : "new")
            try folder.write("s.json", old)
        }
        #expect(!seen.isEmpty)
    }
}

/// A raw connection to the control socket, for uploads cut short and hostile names.
final class RawConnection {
    let descriptor: Int32

    init?(_ path: String) {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0, var address = UnixSocketAddress(path), address.withSockaddr({ connect(descriptor, $0, $1) }) == 0 else {
            if descriptor >= 0 { Glibc.close(descriptor) }
            return nil
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Sends a request line and reads the answer line.
    func call(_ line: String) -> String? {
        send(Array((line + "\n").utf8))
        var reply: [UInt8] = []
        var byte: UInt8 = 0
        while read(descriptor, &byte, 1) == 1, byte != UInt8(ascii: "\n") { reply.append(byte) }
        return reply.isEmpty ? nil : String(decoding: reply, as: UTF8.self)
    }

    private let open = Atomic<Bool>(true)

    /// Closes the connection once, however often it is called: a second `close` of the
    /// number would close whatever the process opened under it since (another test's pipe).
    func close() {
        if open.exchange(false, ordering: .sequentiallyConsistent) { Glibc.close(descriptor) }
    }

    deinit { close() }
}
