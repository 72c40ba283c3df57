import Foundation
import JukeboxTestSupport
import Subprocess
import Testing

/// What a client can make the built daemon hold: descriptors, and memory after a storm.
@Suite("Resource limits end to end", .timeLimit(.minutes(2)))
struct ResourceLimitTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0.1, count: 800), encoding: .s16, rate: 8000, channels: 1))
        try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#)
    }

    /// A connected socket to the daemon (or -1).
    func rawConnection() -> Int32 {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(socket.utf8) + [0]) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            return -1
        }
        return descriptor
    }

    /// The daemon's pid, from the credentials of a connection to it.
    func daemonPID() -> Int32? {
        let descriptor = rawConnection()
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var credentials = [Int32](repeating: 0, count: 3)
        var size = socklen_t(12)
        guard credentials.withUnsafeMutableBytes({ getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, $0.baseAddress, &size) }) == 0 else { return nil }
        return credentials[0]
    }

    /// 1 100 idle connections under the unit's default limit of 1 024 descriptors used to make
    /// `jukebox status` time out, clips fail with "Too many open files" and durable writes fail.
    @Test func elevenHundredIdleConnectionsLeaveTheDaemonWorking() async throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4096 {
            limit.rlim_cur = min(4096, limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        try #require(limit.rlim_cur >= 1200, "the test itself needs 1 200 descriptors")
        let lines = try await withDaemon(openFiles: 1024) { log in
            var held: [Int32] = []
            defer { held.filter { $0 >= 0 }.forEach { close($0) } }
            for _ in 0..<1100 { held.append(rawConnection()) }
            #expect(held.allSatisfy { $0 >= 0 }, "every connection is accepted")
            let status = try await jukebox("status")
            #expect(status.status == 0, "\(status.stderr)")
            #expect(try await jukebox("play", "a").status == 0, "queued and saved durably")
            #expect(await log.waitFor("played a"), "the clip's file opened")
            let pid = try #require(daemonPID())
            let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
            #expect(open <= 256 + 64, "\(open) descriptors open in the daemon")
        }
        #expect(lines.contains { $0.contains("closing the one idle longest") })
    }

    /// Runs the daemon under a limit of `openFiles` descriptors (`extra`: more arguments)
    /// while `body` runs, stops it, and checks it stopped cleanly with no descriptor error.
    /// Returns its log.
    func withDaemon(openFiles: Int, extra: [String] = [], _ body: @Sendable (LogLines) async throws -> Void) async throws -> [String] {
        let log = LogLines()
        let arguments = ["-c", "ulimit -n \(openFiles) && exec \"$0\" \"$@\"", DaemonProcess.binaryDirectory + "/jukeboxd", folder.file("s.json"),
                         "--socket", socket, "--state", folder.file("state.json"), "--device", "file:FILE=\(folder.file("o.raw")),FORMAT=raw"] + extra
        let result = try await Subprocess.run(.path("/bin/sh"), arguments: Arguments(arguments), platformOptions: TestProcesses.options, input: .none, output: .discarded, error: .sequence) { execution in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await line in execution.standardError.strings() { await log.append(line) }
                    await log.finish()
                }
                guard await log.waitFor("control socket listening") else { return false }
                try await body(log)
                try execution.send(signal: .terminate)
                try await group.waitForAll()
                return true
            }
        }
        #expect(result.closureResult == true)
        #expect(DaemonProcess.status(result.terminationStatus) == 0)
        let lines = await log.lines
        #expect(!lines.contains { $0.contains("Too many open files") || $0.contains("error") }, "\(lines.filter { $0.contains("error") })")
        return lines
    }

    /// Under a limit of 256 descriptors the web remote serves 48 connections at once; a flood of
    /// 300 more, from five addresses (one address may hold only a quarter of them), waits in the
    /// backlog instead of taking the descriptors that clips, the device, the state file and the
    /// control socket need. Once the flood goes, the page is served.
    @Test func aFloodOfWebConnectionsLeavesTheDaemonWorking() async throws {
        _ = try await withDaemon(openFiles: 256, extra: ["--http", "127.0.0.1:0"]) { log in
            #expect(await log.waitFor("web remote listening"))
            let line = await log.lines.first { $0.contains("web remote listening") } ?? ""
            let port = try #require(line.split(separator: "(port ").last.flatMap { Int($0.dropLast()) })
            var flood: [Int32] = []
            defer { flood.filter { $0 >= 0 }.forEach { close($0) } }
            for index in 0..<300 { flood.append(Loopback.connect(port: port, waiting: false, from: UInt8(2 + index % 5))) }
            #expect(await log.waitFor("the web remote has 48 connections open"), "the limit is reached, and said")
            let status = try await jukebox("status")
            #expect(status.status == 0, "\(status.stderr)")
            #expect(try await jukebox("play", "a").status == 0, "queued and saved durably")
            #expect(await log.waitFor("played a"), "the clip's file opened")
            let pid = try #require(daemonPID())
            let sockets = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").filter {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)"))?.hasPrefix("socket:") == true
            }
            // Counted after the requests above: the flood's 48, the two listening sockets, the
            // journal's and the one asking.
            #expect(sockets.count <= 48 + 6, "\(sockets.count) sockets open in the daemon")
            flood.forEach { close($0) }
            flood = []
            let page = try await WebAPITests.curl(["--cacert", folder.file("state.tls/ca.crt"), "https://127.0.0.1:\(port)/"])
            #expect(page.status == 200, "the page is served once the flood has gone")
        }
    }

    static func residentKilobytes(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// A storm of 9 000 entries, cleared, used to leave the daemon at three times its idle
    /// memory (each durable write built the whole queue as one JSON tree, and freed memory
    /// stayed with the allocator); and removed entries stayed in the play queue's stream while
    /// paused, 190 MB over 100 rounds.
    @Test func memoryComesBackAfterStormsAreCleared() async throws {
        let enqueue = #"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"clips":["# + Array(repeating: #""a""#, count: 9000).joined(separator: ",") + "]}}"
        let clear = #"{"jsonrpc":"2.0","id":2,"method":"clear"}"#
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "file:FILE=\(folder.file("o.raw")),FORMAT=raw"]
        let figures = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            #expect(try await jukebox("pause").status == 0)
            let pid = try #require(daemonPID())
            let idle = Self.residentKilobytes(pid)
            #expect(await RawControl.call(socket, enqueue)?.contains(#""ticket":9000"#) == true)
            let full = Self.residentKilobytes(pid)
            #expect(await RawControl.call(socket, clear)?.contains(#""removed""#) == true)
            let cleared = Self.residentKilobytes(pid)
            for _ in 0..<10 {
                _ = await RawControl.call(socket, enqueue)
                _ = await RawControl.call(socket, clear)
            }
            let rounds = Self.residentKilobytes(pid)
            return (idle, full, cleared, rounds)
        }.result
        let (idle, full, cleared, rounds) = figures
        print("memory: idle \(idle) kB, 9 000 waiting \(full) kB, cleared \(cleared) kB, after 10 more rounds \(rounds) kB")
        #expect(Double(cleared) <= 1.5 * Double(idle), "cleared: \(cleared) kB against \(idle) kB idle")
        #expect(rounds <= cleared + 2048, "10 rounds: \(rounds) kB against \(cleared) kB after the first")
    }
}
