import Foundation
import JukeboxTestSupport
import Subprocess
import Synchronization
import Testing

/// Uploads under load, with the built daemon and real ffmpeg: how many are received and
/// converted at once, what a stop does to a conversion, and what a killed daemon leaves.
@Suite("Uploads at once, and at a stop", .serialized, .timeLimit(.minutes(2)))
struct UploadLimitTests: DaemonSuite {
    let folder: TemporaryDirectory
    let home: TemporaryDirectory
    let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 8000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
    var socket: String { folder.file("c.sock") }
    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }

    init() throws {
        folder = try TemporaryDirectory()
        home = try TemporaryDirectory()
        try folder.write("water.wav", tone)
        try home.write("memo.wav", tone)
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "maxUploadSize": 1000000000, "maxUploadLength": "3h",
              "http": { "listen": "127.0.0.1:0", "https": false }, "clips": [ { "file": "water.wav" } ] }
            """)
    }

    func strays() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".upload-") }.sorted()
    }

    static func upload(_ id: Int, _ name: String, size: Int) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"upload","params":{"name":"\#(name)","size":\#(size)}}"#
    }

    /// 64 uploads of 40 MB from one address took 1.7 GB of disk and 270 MB of memory. Two are
    /// received and converted at once, from every front end together; one more is refused at
    /// once with 503 and `Retry-After` (the CLI: exit 75), and gets in when a place is free.
    @Test func twoUploadsAreReceivedAtOnceAndAThirdIsToldToComeBack() async throws {
        let run = try await DaemonProcess.withDaemon(arguments, ready: "web remote listening on") { [self] log in
            let line = await log.lines.first { $0.contains("web remote listening on") } ?? ""
            let port = line.split(separator: "(port ").last.map { String($0.dropLast()) } ?? ""
            let first = try #require(RawConnection(socket)), second = try #require(RawConnection(socket)), third = try #require(RawConnection(socket))
            defer { [first, second, third].forEach { $0.close() } }
            // Under the limit, and at it.
            #expect(first.call(Self.upload(1, "one.wav", size: tone.count)) == #"{"id":1,"jsonrpc":"2.0","result":{"size":16044,"upload":"u1"}}"#)
            #expect(second.call(Self.upload(1, "two.wav", size: tone.count)) == #"{"id":1,"jsonrpc":"2.0","result":{"size":16044,"upload":"u1"}}"#)
            // Over it: the socket, the web remote and the CLI.
            let refused = third.call(Self.upload(1, "three.wav", size: tone.count)) ?? ""
            #expect(refused.contains(#""code":-32013"#) && refused.contains(#""reason":"uploads-busy""#), "\(refused)")
            #expect(refused.contains("2 uploads are being received or converted, the most at once; nothing of this one was kept: send it again in 10 s"), "\(refused)")
            let web = try await WebAPITests.curl(["-X", "POST", "--data-binary", "@\(home.file("memo.wav"))", "http://127.0.0.1:\(port)/clips?name=memo.wav"])
            #expect(web.status == 503)
            #expect(web.headers["retry-after"] == "10", "\(web.headers)")
            let cli = try await jukebox(["add", home.file("memo.wav")])
            #expect(cli.status == 75, "\(cli)")
            #expect(cli.stderr.contains("send it again in 10 s"), "\(cli.stderr)")
            let stored = try strays()
            #expect(stored.count == 2, "only the two accepted are stored: \(stored)")
            // The first is stored: its place is free again.
            first.send(tone)
            let added = first.call(#"{"jsonrpc":"2.0","id":2,"method":"addClip","params":{"upload":"u1"}}"#) ?? ""
            #expect(added.contains(#""file":"one.wav""#), "\(added)")
            #expect(third.call(Self.upload(2, "three.wav", size: tone.count)) == #"{"id":2,"jsonrpc":"2.0","result":{"size":16044,"upload":"u1"}}"#)
            // An abandoned one frees its place too.
            second.close()
            #expect(await log.waitFor("the upload of two.wav ended after 0 of its 16044 bytes"))
            let memo = try await jukebox(["add", home.file("memo.wav")])
            #expect(memo.status == 0, "\(memo)")
        }
        #expect(run.status == 0)
        let left = try strays()
        #expect(left.isEmpty, "\(left)")
    }

    /// Three hours of Opus in WebM, which ffmpeg takes seconds to convert.
    func longRecording() async throws -> String {
        let ffmpeg = try #require(SessionEditingTests.ffmpeg, "ffmpeg is needed (scripts/test.sh installs it)")
        for arguments in [["-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono", "-t", "60", "-c:a", "libopus", "-b:a", "6k", home.file("minute.webm")],
                          ["-stream_loop", "179", "-i", home.file("minute.webm"), "-c", "copy", home.file("long.webm")]] {
            let made = try await Subprocess.run(.path(.init(ffmpeg)), arguments: Arguments(["-nostdin", "-loglevel", "error", "-y"] + arguments), platformOptions: TestProcesses.options, output: .discarded, error: .string(limit: 4096))
            #expect(made.terminationStatus.isSuccess, "\(made.standardError)")
        }
        return home.file("long.webm")
    }

    /// The processes whose command line names the clips folder (ffmpeg converting an upload).
    func converters() -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { $0.allSatisfy(\.isNumber) }.filter { pid in
            guard let line = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")) else { return false }
            let text = String(decoding: line.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
            return text.contains("ffmpeg") && text.contains(folder.path)
        }
    }

    /// Waits until ffmpeg runs and has begun its output (the log line comes just before it
    /// is started); false after 10 s.
    func converting() async throws -> Bool {
        for _ in 0..<200 {
            if !converters().isEmpty, try strays().contains(where: { $0.hasSuffix(".flac") }) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// A conversion held a stop up for its whole time limit (122 s, past systemd's 90). A
    /// stop now ends ffmpeg at once, the client is told why, and nothing is left behind.
    @Test(.enabled(if: SessionEditingTests.ffmpeg != nil, "ffmpeg is not installed (scripts/test.sh installs it)"))
    func aStopEndsAConversionAtOnce() async throws {
        let long = try await longRecording()
        let adding = Mutex<Task<DaemonProcess.Outcome, any Error>?>(nil)
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] (log: LogLines) async throws -> ContinuousClock.Instant in
            let task = Task { try await jukebox(["add", long]) }
            adding.withLock { $0 = task }
            #expect(await log.waitFor("converting the upload long.webm with ffmpeg"))
            let converting = try await converting()
            #expect(converting, "ffmpeg is converting")
            return ContinuousClock.now
        }
        let took = ContinuousClock.now - run.result
        #expect(run.status == 0)
        #expect(took < .seconds(5), "the stop took \(took)")
        let added = try await #require(adding.withLock { $0 }).value
        #expect(added.status == 1 || added.status == 69, "\(added)")
        #expect(added.stderr.contains("ffmpeg was ended: jukeboxd is stopping") || added.stderr.contains("closed the connection"), "\(added.stderr)")
        #expect(converters().isEmpty)
        let left = try strays()
        #expect(left.isEmpty, "\(left)")
    }

    /// After a SIGKILL, ffmpeg ran on under init and its files stayed in the clips folder for
    /// good. It now dies with the daemon, and the next start removes what was left, except a
    /// temporary file that a live process still holds.
    @Test(.enabled(if: SessionEditingTests.ffmpeg != nil, "ffmpeg is not installed (scripts/test.sh installs it)"))
    func aKilledDaemonLeavesNoConversionRunningAndTheNextStartRemovesItsFiles() async throws {
        let long = try await longRecording()
        let killed = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", stopWith: .kill) { [self] (log: LogLines) async throws -> Bool in
            _ = Task { try await jukebox(["add", long]) }
            guard await log.waitFor("converting the upload long.webm with ffmpeg") else { return false }
            return try await converting()
        }
        #expect(killed.result)
        // The kernel ends ffmpeg when the daemon's thread that started it is gone.
        var left = converters()
        for _ in 0..<100 where !left.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            left = converters()
        }
        #expect(left.isEmpty, "ffmpeg outlived the daemon: \(left)")
        let stale = try strays()
        #expect(stale.count == 2, "the upload and its part-converted FLAC: \(stale)")
        // One more, held open and locked as an upload under way in another process would be.
        try folder.write(".upload-abc123.part", [1, 2, 3])
        let held = open(folder.file(".upload-abc123.part"), O_RDONLY)
        defer { close(held) }
        #expect(flock(held, LOCK_EX) == 0)
        let restarted = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { _ in }
        #expect(restarted.lines.contains { $0.contains("removed 2 unfinished upload files that an earlier run left in the clips folder") }, "\(restarted.lines)")
        #expect(try strays() == [".upload-abc123.part"])
    }
}
