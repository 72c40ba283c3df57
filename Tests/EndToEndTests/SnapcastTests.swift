import Foundation
import JukeboxTestSupport
import Testing

/// The Snapcast output with the built daemon and a real snapserver and two snapclients that
/// play into files: clips of three formats, queued by three clients at once, heard whole, in
/// order and in sync in both "rooms"; a prompt skip; and snapserver missing, killed or
/// misconfigured without losing a clip.
@Suite("Snapcast output", .serialized, .timeLimit(.minutes(2)), .enabled(if: Snapcast.isInstalled, Comment(rawValue: Snapcast.missing)))
struct SnapcastTests: DaemonSuite {
    let folder: TemporaryDirectory
    let snapcast: Snapcast
    var socket: String { folder.file("c.sock") }
    /// Far enough apart to tell in a 10 ms window.
    static let tones: [Double] = [500, 1100, 1700, 2300]

    init() throws {
        folder = try TemporaryDirectory()
        snapcast = try Snapcast(buffer: 300)
        // Three formats: 12 kHz mono, 44.1 kHz stereo, 48 kHz 24-bit stereo; one second each.
        try folder.write("c0.wav", WAVFile.bytes(WAVFile.tone(frequency: Self.tones[0], frames: 12_000, rate: 12_000, channels: 1), encoding: .s16, rate: 12_000, channels: 1))
        try folder.write("c1.wav", WAVFile.bytes(WAVFile.tone(frequency: Self.tones[1], frames: 44_100, rate: 44_100, channels: 2), encoding: .s16, rate: 44_100, channels: 2))
        try folder.write("c2.wav", WAVFile.bytes(WAVFile.tone(frequency: Self.tones[2], frames: 48_000, rate: 48_000, channels: 2), encoding: .s24, rate: 48_000, channels: 2))
        // Three seconds, to be skipped.
        try folder.write("long.wav", WAVFile.bytes(WAVFile.tone(frequency: Self.tones[3], frames: 144_000, rate: 48_000, channels: 2), encoding: .s16, rate: 48_000, channels: 2))
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" },
              "output": { "type": "snapcast", "pipe": "\(snapcast.pipe)", "format": "48000:16:2" },
              "clips": [ { "file": "c0.wav" }, { "file": "c1.wav" }, { "file": "c2.wav" }, { "file": "long.wav" } ] }
            """)
    }

    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--log-level", "debug"] }

    /// The client's output so far, analysed on a thread of its own: the file grows by 192 kB a
    /// second and is read again on every poll, work the test process's cooperative pool (two
    /// threads) should not carry while other tests wait on it.
    func capture(_ client: String) async -> CaptureAnalysis {
        let bytes = snapcast.outputBytes(client)
        let analyse = { @Sendable (bytes: [UInt8]) in CaptureAnalysis(bytes: bytes, frequencies: Self.tones, rate: Snapcast.rate) }
        return (try? await Loopback.offThePool { analyse(bytes) }) ?? analyse([])
    }

    /// Waits (up to 20 s) until the client's output holds `count` tone segments and then 0.5 s
    /// of quiet (after the window the last tone ends in, and the one after).
    func waitForSound(_ client: String, segments count: Int) async throws -> CaptureAnalysis {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let heard = await capture(client)
            if let last = heard.segments.dropFirst(count - 1).first, heard.sound.count - last.end >= 52,
               !heard.sound[(last.end + 2)...].contains(true) {
                return heard
            }
            if ContinuousClock.now > deadline { return heard }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Waits (up to 10 s) until the client's output has ended in 100 ms of sound.
    func waitUntilSounding(_ client: String) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let file = FileHandle(forReadingAtPath: snapcast.output(client)) {
                let size = (try? file.seekToEnd()) ?? 0
                let window = UInt64(Snapcast.rate / 10 * 4)
                if size > window {
                    try file.seek(toOffset: size - window)
                    let tail = Self.left([UInt8](file.readDataToEndOfFile()))
                    try? file.close()
                    if tail.filter({ abs(Int($0)) > 1036 }).count > tail.count / 2 { return }
                } else {
                    try? file.close()
                }
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("\(client) never sounded")
    }

    @Test func clipsOfThreeFormatsFromThreeClientsPlayWholeInOrderAndInSyncInBothRooms() async throws {
        let run = try await snapcast.run(clients: ["kitchen", "workshop"]) { _, _ in
            try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                // Held while the three are queued at once, so they play back to back.
                #expect(try await jukebox("pause").status == 0)
                let tickets = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                    for index in 0..<3 {
                        group.addTask {
                            let reply = try await jukebox("--json", "play", "c\(index)", "--client", "room \(index)")
                            return (index, try #require(reply.stdout.firstMatch(of: /"ticket":(\d+)/).map { Int($0.1)! }, "\(reply)"))
                        }
                    }
                    return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
                }
                #expect(try await jukebox("resume").status == 0)
                #expect(await log.waitUntil { $0.filter { $0.contains("played c") }.count == 3 })
                // Played means written to the pipe: the rooms hear it a buffer later.
                for client in ["kitchen", "workshop"] { _ = try await waitForSound(client, segments: 3) }
                return tickets.sorted { $0.value < $1.value }.map { Self.tones[$0.key] }
            }
        }
        let order = run.result
        #expect(run.lines.filter { $0.contains("played c") }.count == 3, "each logged as played once")
        for client in ["kitchen", "workshop"] {
            let heard = await capture(client)
            let segments = heard.segments
            #expect(segments.map(\.frequency) == order, "\(client): \(segments)")
            // Whole: one second each, within a 10 ms window at either end.
            #expect(segments.allSatisfy { (99...101).contains($0.windows) }, "\(client): \(segments)")
            // Back to back: at most one 20 ms chunk of silence between clips, no overlap.
            #expect(CaptureAnalysis.gaps(segments).allSatisfy { (0...2).contains($0) }, "\(client): \(segments)")
            let inside = heard.twoToneWindows.filter { $0 > (segments.first?.start ?? 0) && $0 < (segments.last?.end ?? 0) - 1 }
            #expect(inside.count <= 2 * 2, "\(client): two tones at once in \(inside)")
        }
        // Both rooms play the same samples: aligned on the first sound, they agree.
        Self.expectSameSamples(snapcast.outputBytes("kitchen"), snapcast.outputBytes("workshop"), seconds: 3)
    }

    /// Maps the client's output onto the wall clock: it writes in real time, in pieces, so the
    /// largest (frames - clock) seen over 0.4 s is taken, as for the paced rig's capture.
    func clockOffset(_ client: String) async throws -> Double {
        var best = -Double.infinity
        let end = ContinuousClock.now + .milliseconds(400)
        while ContinuousClock.now < end {
            let size = (try? FileManager.default.attributesOfItem(atPath: snapcast.output(client))[.size] as? Int) ?? 0
            best = max(best, Double(size / 4) / Double(Snapcast.rate) - Self.now())
            try await Task.sleep(for: .milliseconds(2))
        }
        return best
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    @Test func aSkipIsSilentInTheRoomsWithin150msPlusSnapcastsBuffer() async throws {
        let run = try await snapcast.run(clients: ["kitchen"]) { _, _ in
            try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log -> Double in
                #expect(try await jukebox("play", "long").status == 0)
                // Heard in the room for a moment first.
                try await waitUntilSounding("kitchen")
                let offset = try await clockOffset("kitchen")
                let asked = Self.now()
                #expect(try await jukebox("skip").status == 0)
                #expect(await log.waitFor("skipped long"))
                let heard = try await waitForSound("kitchen", segments: 1)
                let end = try #require(heard.segments.last)
                #expect(end.windows < 280, "cut short: \(heard.segments)")
                // The last sound of it, on the wall clock.
                let samples = Self.left(snapcast.outputBytes("kitchen"))
                let last = samples[..<min(samples.count, (end.end + 2) * Snapcast.rate / 100)].lastIndex { abs(Int($0)) > 1036 } ?? 0
                // It fades out (the player's 10 ms fade, written after what the pipe held),
                // rather than stopping at full level with a click.
                let tail = samples[max(0, last - 96)...last].map { abs(Int($0)) }.max() ?? 0
                #expect(tail < 8_192, "the last 2 ms before silence peak at \(tail) of 16 384")
                return Double(last) / Double(Snapcast.rate) - offset - asked
            }
        }
        let lag = run.result
        print("skip to silence in the room: \(Int(lag * 1000)) ms, Snapcast's buffer \(snapcast.buffer) ms")
        #expect(lag <= 0.150 + Double(snapcast.buffer) / 1000, "silent \(Int(lag * 1000)) ms after the skip")
        #expect(run.lines.contains { $0.contains("skipped long") })
    }

    @Test func withoutSnapserverClipsWaitAndPlayInOrderOnceItStarts() async throws {
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            #expect(try await jukebox("play", "c0", "c1").status == 0)
            #expect(await log.waitFor("stays queued, retrying"))
            let status = try await jukebox("status")
            #expect(status.stdout.contains("\(snapcast.pipe) does not exist"), "\(status.stdout)")
            try await snapcast.run(clients: ["kitchen"]) { _, _ in
                #expect(await log.waitUntil { $0.filter { $0.contains("played c") }.count == 2 })
                let heard = try await waitForSound("kitchen", segments: 2)
                #expect(heard.segments.map(\.frequency) == [Self.tones[0], Self.tones[1]], "\(heard.segments)")
                #expect(heard.segments.allSatisfy { (99...101).contains($0.windows) }, "\(heard.segments)")
            }
        }
        #expect(run.status == 0)
        let warnings = run.lines.filter { $0.contains("warning") && $0.contains("does not exist") }
        #expect(warnings.count == 1, "one warning while it waits: \(warnings)")
    }

    @Test func snapserverKilledMidClipThatClipPlaysAgainWholeAndNothingIsLost() async throws {
        let server = snapcast.server()
        let room = snapcast.client("kitchen")
        try await server.start()
        try await room.start()
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            #expect(try await jukebox("play", "long", "c1").status == 0)
            try await waitUntilSounding("kitchen")
            await server.stop(signal: SIGKILL)
            #expect(await log.waitFor("stays queued, retrying"))
            try await server.start()
            #expect(await log.waitFor("played c1"))
            let heard = try await waitForSound("kitchen", segments: 3)
            let segments = heard.segments
            #expect(segments.map(\.frequency).suffix(2) == [Self.tones[3], Self.tones[1]], "\(segments)")
            #expect(segments.dropLast().last.map { (299...301).contains($0.windows) } == true, "played again whole: \(segments)")
            #expect(segments.last.map { (99...101).contains($0.windows) } == true, "\(segments)")
        }
        await room.stop()
        await server.stop()
        #expect(run.lines.filter { $0.contains("played long") }.count == 1)
        #expect(run.lines.contains { $0.contains("snapserver stopped reading") }, "\(run.lines)")
    }

    @Test func aPipeThatIsNotAFIFOOrCannotBeReachedIsNamedAndTheDaemonWaits() async throws {
        try folder.write("not-a-pipe", text: "keep me")
        for (pipe, expected) in [
            (folder.file("not-a-pipe"), "\(folder.file("not-a-pipe")) is not a named pipe (FIFO)"),
            (folder.file("not-a-pipe/fifo"), "a folder in \(folder.file("not-a-pipe/fifo")) is not a folder"),
        ] {
            let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--output", "snapcast:\(pipe)"]
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                #expect(try await jukebox("play", "c0").status == 0)
                #expect(await log.waitFor("stays queued, retrying"))
                let status = try await jukebox("status")
                #expect(status.stdout.contains("snapcast:\(pipe) (48000:16:2)") && status.stdout.contains(expected), "\(status.stdout)")
            }
            #expect(run.status == 0, "the daemon waited, and stopped when asked")
            #expect(run.lines.contains { $0.contains(expected) }, "\(run.lines)")
        }
        #expect(try String(decoding: folder.read("not-a-pipe"), as: UTF8.self) == "keep me", "nothing was written into the file")
    }

    @Test(.enabled(if: UnixUser.isPossible, Comment(rawValue: UnixUser.impossible)))
    func aPipeTheDaemonMayNotWriteIsNamedWithWhatToDo() async throws {
        try await withUsers(1) { users in
            let user = users[0]
            // The daemon's own folder, and a pipe in a folder only root may enter.
            let home = try TemporaryDirectory()
            for name in ["c0.wav"] { try home.write(name, folder.read(name)) }
            try FileManager.default.createDirectory(atPath: home.file("locked"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            #expect(mkfifo(home.file("locked/fifo"), 0o666) == 0)
            try home.write("s.json", text: """
                { "interval": { "min": "1h", "max": "1h" }, "output": { "type": "snapcast", "pipe": "\(home.file("locked/fifo"))" }, "clips": [ { "file": "c0.wav" } ] }
                """)
            // Modes set outright, whatever the test run's umask.
            for name in ["s.json", "c0.wav"] {
                #expect(chown(home.file(name), user.uid, user.gid) == 0 && chmod(home.file(name), 0o644) == 0)
            }
            #expect(chown(home.path, user.uid, user.gid) == 0 && chmod(home.path, 0o755) == 0)
            #expect(chown(home.file("locked"), 0, 0) == 0 && chmod(home.file("locked"), 0o700) == 0)
            let socket = home.file("c.sock")
            try await user.withDaemon([DaemonProcess.binaryDirectory + "/jukeboxd", home.file("s.json"), "--socket", socket, "--state", home.file("state.json")]) {
                #expect(try await user.run([DaemonProcess.binaryDirectory + "/jukebox", "--socket", socket, "play", "c0"]).status == 0)
                var status = ""
                for _ in 0..<100 where !status.contains("retrying") {
                    status = try await user.run([DaemonProcess.binaryDirectory + "/jukebox", "--socket", socket, "status"]).stdout
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(status.contains("no permission to write \(home.file("locked/fifo"))"), "\(status)")
            }
        }
    }

    /// Both rooms played the same samples in sync: see `RoomAgreement`.
    static func expectSameSamples(_ first: [UInt8], _ second: [UInt8], seconds: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        let agreement = RoomAgreement(left(first), left(second), from: (onset(first), onset(second)), seconds: seconds)
        #expect(agreement.blocks >= 100, "both rooms played over a second: \(agreement.blocks) blocks of 10 ms", sourceLocation: sourceLocation)
        #expect(agreement.differing.count * 20 <= agreement.blocks, "the two rooms differ in \(agreement.differing.count) of \(agreement.blocks) 10 ms blocks: \(agreement.differing.prefix(20))", sourceLocation: sourceLocation)
    }

    static func left(_ bytes: [UInt8]) -> [Int16] {
        stride(from: 0, to: bytes.count - 3, by: 4).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    /// The first frame louder than -30 dBFS.
    static func onset(_ bytes: [UInt8]) -> Int {
        left(bytes).firstIndex { abs(Int($0)) > 1036 } ?? 0
    }
}

/// How far two rooms' left channels agree, aligned on their first sound: each 10 ms block of
/// one is looked for sample for sample (within 1) in the other, where the last block was found
/// or up to 10 ms either side of it. A snapclient keeps its room in sync by now and then playing
/// a frame twice or leaving one out, more often on a busy machine (on a slow one, once every
/// 50 ms chunk for seconds): the block where it did so is the same samples up to that frame and
/// a frame along after it, and is counted as corrected, not as differing; the blocks after it are
/// found a frame or so along.
struct RoomAgreement {
    static let block = Snapcast.rate / 100
    var blocks = 0
    /// The blocks (counted from the first sound) found nowhere within reach.
    var differing: [Int] = []
    /// The blocks in which one room played a frame twice or left one out.
    var corrected = 0
    /// The largest distance, in frames, at which a block was found.
    var largestShift = 0

    init(_ a: [Int16], _ b: [Int16], from start: (Int, Int), seconds: Int? = nil) {
        let block = Self.block
        let length = min(a.count - start.0, b.count - start.1, seconds.map { $0 * Snapcast.rate } ?? .max)
        /// Whether frames `range` of the block at `from` are in the other room `shift` along.
        func agrees(_ from: Int, _ shift: Int, _ range: Range<Int> = 0..<block) -> Bool {
            let other = start.1 + from + shift
            guard other + range.lowerBound >= 0, other + range.upperBound <= b.count else { return false }
            for index in range where abs(Int(a[start.0 + from + index]) - Int(b[other + index])) > 1 { return false }
            return true
        }
        /// The shift after a frame played twice (+1) or left out (−1) inside the block at `from`.
        func correction(_ from: Int, _ shift: Int) -> Int? {
            for step in [1, -1] {
                let after = shift + step
                // The first frame from which the rest of the block is a frame along; the frame
                // before it is the one left out (or played twice), and the ones before that agree.
                guard let split = (1..<block).first(where: { agrees(from, after, $0..<block) }) else { continue }
                if agrees(from, shift, 0..<(split - 1)) { return after }
            }
            return nil
        }
        var shift = 0
        for from in stride(from: 0, to: length - block + 1, by: block) {
            blocks += 1
            if agrees(from, shift) { continue }
            if let after = correction(from, shift) {
                corrected += 1
                shift = after
                largestShift = max(largestShift, abs(after))
                continue
            }
            let near = (1...block).lazy.flatMap { [shift + $0, shift - $0] }.filter { abs($0) <= block }
            if let found = near.first(where: { agrees(from, $0) }) {
                shift = found
                largestShift = max(largestShift, abs(found))
            } else {
                differing.append(from / block)
            }
        }
    }
}

@Suite("Comparing two rooms")
struct RoomAgreementTests {
    let music: [Int16] = (0..<96_000).map { (frame: Int) -> Int16 in
        let time = Double(frame) / 48_000
        let low: Double = 8000 * sin(2 * Double.pi * 203 * time)
        let high: Double = 3000 * sin(2 * Double.pi * 1117 * time)
        return Int16(low + high)
    }

    @Test func aFramePlayedTwiceOrLeftOutIsFoundAFrameAlong() {
        var twice = music
        twice.insert(twice[30_000], at: 30_000)
        twice.remove(at: 70_000)
        let agreement = RoomAgreement(music, twice, from: (0, 0))
        #expect(agreement.blocks == 200)
        #expect(agreement.differing.isEmpty, "\(agreement.differing)")
        #expect(agreement.corrected == 2, "the two blocks where a frame was played twice or left out")
        #expect(agreement.largestShift == 1)
    }

    /// A snapclient on a slow machine corrects in every 50 ms chunk for seconds: each of those
    /// blocks is the same samples either side of its frame, and none differs.
    @Test func aCorrectionInEveryChunkIsStillTheSameSamples() {
        var drifting = music
        for chunk in stride(from: 2_400 * 8, to: 90_000, by: 2_400).reversed() { drifting.remove(at: chunk + 1_234) }
        let agreement = RoomAgreement(music, drifting, from: (0, 0))
        #expect(agreement.differing.isEmpty, "\(agreement.differing)")
        #expect(agreement.corrected == 30)
    }

    @Test func aDifferentMixOrARoomOutOfSyncDiffers() {
        // The clip's tone 3 dB louder in one room from the second half on.
        let louder: [Int16] = music.enumerated().map { (index: Int, sample: Int16) -> Int16 in
            index < 48_000 ? sample : Int16(clamping: Int(Double(sample) * 1.4))
        }
        #expect(RoomAgreement(music, louder, from: (0, 0)).differing.count == 100)
        // 20 ms behind: further than the 10 ms looked at.
        let late = [Int16](repeating: 0, count: 960) + music
        #expect(RoomAgreement(music, late, from: (0, 0)).differing.count >= 190)
    }
}
