import Foundation
import JukeboxTestSupport
import Subprocess
import Testing

/// Subscribers hear of a change only once it is on disk: with the daemon's fsync held back by
/// strace's fault injection and the daemon killed meanwhile, a subscriber never heard of the
/// entry that the crash lost.
@Suite("Events leave the core once durable", .timeLimit(.minutes(1)), .enabled(if: Strace.isInstalled, Comment(rawValue: Strace.missing)))
struct OutboxTests {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }
    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0.2, count: 800), encoding: .s16, rate: 8000, channels: 1))
        try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#)
    }

    @Test func aSubscriberIsNotToldOfAnEnqueueThatACrashDuringItsWriteLoses() async throws {
        // Each fsync waits 3 s before it runs.
        let traced = ["-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync", "-e", "inject=fsync:delay_enter=3000000", DaemonProcess.binaryDirectory + "/jukeboxd"]
        let log = LogLines()
        let heard = try await Subprocess.run(
            .path("/usr/bin/strace"), arguments: Arguments(traced + arguments), platformOptions: TestProcesses.options, input: .none, output: .discarded, error: .sequence
        ) { [socket] execution in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await line in execution.standardError.strings() { await log.append(line) }
                    await log.finish()
                }
                guard await log.waitFor("control socket listening") else { return [String]() }
                let daemon = try #require(Strace.child(of: execution.processIdentifier.value), "the daemon under strace")
                let watcher = try UnixConnection(path: socket)
                watcher.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
                #expect(watcher.readLine() == #"{"id":1,"jsonrpc":"2.0","result":{"subscribed":true}}"#)
                // The enqueue's answer waits for the write, which waits in fsync.
                let enqueue = ThreadTask { RawControl.exchange(socket, #"{"jsonrpc":"2.0","id":2,"method":"enqueue","params":{"clips":["a"]}}"#) }
                #expect(try await Loopback.offThePool { Strace.waitUntilInFsync(daemon) }, "the daemon began its write")
                // Were the event sent before the write, it would come now, 3 s ahead of it (a
                // second is plenty to hear it, and leaves two before the write could end).
                let early = try await Loopback.offThePool { watcher.readLine(within: 1) }
                kill(daemon, SIGKILL)
                var lines = early.map { [$0] } ?? []
                while let line = try await Loopback.offThePool({ watcher.readLine(within: 10) }) { lines.append(line) }
                let answer = try await enqueue.value ?? ""
                #expect(answer.isEmpty, "the enqueue was never answered, since the daemon died writing it: \(answer)")
                try await group.waitForAll()
                return lines
            }
        }.closureResult
        // What is not saved (the device opening for the clip) may be told at once.
        let told = heard.filter { !$0.contains(#""method":"device""#) && !$0.contains(#""method":"scheduled""#) }
        #expect(told.isEmpty, "the subscriber heard of an entry that was never on disk: \(told)")
        // After the crash the entry is gone, and was never announced.
        let restarted = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [socket] _ in
            // The events of a change that is saved do come.
            let watcher = try UnixConnection(path: socket)
            watcher.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
            _ = watcher.readLine()
            let queued = try await DaemonProcess.run(["--socket", socket, "--json", "queue"], tool: "jukebox").stdout
            let played = try await DaemonProcess.run(["--socket", socket, "play", "a"], tool: "jukebox")
            #expect(played.status == 0)
            // The device's events are not saved, so they may come first.
            let event = try await Loopback.offThePool { () -> String? in
                while let line = watcher.readLine(within: 10) { if line.contains(#""queued""#) { return line } }
                return nil
            }
            return (queued, event)
        }
        #expect(restarted.result.0.contains(#""waiting":[]"#), "\(restarted.result.0)")
        #expect(restarted.result.1?.contains(#""queued""#) == true, "\(restarted.result.1 ?? "nothing")")
    }
}

/// strace, for fault injection into the daemon's system calls.
enum Strace {
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") }
    static let missing = "strace is not installed (apt-get install strace); scripts/test.sh installs it"

    /// The process strace started.
    static func child(of pid: pid_t) -> pid_t? {
        for _ in 0..<500 {
            if let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8),
               let first = text.split(separator: " ").first, let child = pid_t(first) { return child }
            usleep(10_000)
        }
        return nil
    }

    /// The system call number of fsync for the program running as `pid`, from the machine
    /// field of its executable's ELF header: the kernel's own numbers, which differ from this
    /// test's when the daemon runs under an emulator (qemu-user is an x86-64 program).
    static func fsyncNumber(of pid: pid_t) -> String {
        guard let header = FileManager.default.contents(atPath: "/proc/\(pid)/exe"), header.count >= 20 else { return "?" }
        switch UInt16(header[18]) | UInt16(header[19]) << 8 {
        case 62: return "74"  // EM_X86_64
        case 183: return "82"  // EM_AARCH64
        default: return "?"
        }
    }

    /// Waits, at most 20 s, until one of the process's threads is inside fsync.
    static func waitUntilInFsync(_ pid: pid_t) -> Bool {
        let fsync = fsyncNumber(of: pid)
        for _ in 0..<2000 {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            for task in tasks {
                let call = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/syscall", encoding: .utf8)) ?? ""
                if call.split(separator: " ").first == Substring(fsync) { return true }
            }
            usleep(10_000)
        }
        return false
    }
}

extension UnixConnection {
    /// The next line, or nil when none comes within `seconds` or the stream ends.
    func readLine(within seconds: Int) -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        let deadline = Date().addingTimeInterval(TimeInterval(seconds))
        while true {
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            guard poll(&ready, 1, left) == 1, read(descriptor, &byte, 1) == 1 else { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }
}
