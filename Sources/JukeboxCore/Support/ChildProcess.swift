#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs another program from an argument list, never through a shell: hooks, ffmpeg, a speech
/// engine. Its output (stdout and stderr together) is kept up to `outputLimit` bytes and the
/// rest read and dropped, so a chatty program can neither block on a full pipe nor fill memory.
/// It runs in a process group of its own, and the whole group is killed at `timeLimit`, so a
/// hook that started a child of its own cannot leave it behind. The calling thread waits, so
/// run it on a `BlockingWorkQueue`.
public enum ChildProcess {
    public struct Outcome: Sendable, Equatable {
        public enum Ending: Sendable, Equatable {
            case exited(Int32)
            case signalled(Int32)
            /// Killed at the time limit.
            case timedOut
        }
        public var ending: Ending
        /// What it printed, at most `outputLimit` bytes of it.
        public var output: String

        public var succeeded: Bool { ending == .exited(0) }
    }

    public struct SpawnFailure: Error, Sendable, CustomStringConvertible {
        public var program: String
        public var errno: Int32
        public var description: String { "\(program) could not be started: \(FileReadError(errno: errno))" }
        /// No such program (not installed, or a wrong path).
        public var isMissingProgram: Bool { errno == ENOENT }
    }

    /// Runs `arguments` (the first is the program: a path, or a name looked up in `PATH`) with
    /// `environment` added to the daemon's own, and `input` on its standard input.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], input: [UInt8] = [], timeLimit: Duration, outputLimit: Int = 4096
    ) throws(SpawnFailure) -> Outcome {
        precondition(!arguments.isEmpty)
        var output: [Int32] = [0, 0]
        var inputPipe: [Int32] = [0, 0]
        // Socket pairs stand in for pipes: they can be made close-on-exec atomically, so a
        // program started at the same moment by another thread cannot inherit them.
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, kind, 0, &output) == 0 else { throw SpawnFailure(program: arguments[0], errno: errno) }
        guard socketpair(AF_UNIX, kind, 0, &inputPipe) == 0 else {
            close(output[0]); close(output[1])
            throw SpawnFailure(program: arguments[0], errno: errno)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, output[1], 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group (killed whole at the limit), with default signal handling.
        var defaults = sigset_t()
        sigfillset(&defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var merged: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let pair = String(cString: pointer)
            if let equals = pair.firstIndex(of: "=") { merged[String(pair[..<equals])] = String(pair[pair.index(after: equals)...]) }
            entry += 1
        }
        for (key, value) in environment { merged[key] = value }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        close(output[1])
        close(inputPipe[0])
        guard spawned == 0 else {
            close(output[0])
            close(inputPipe[1])
            throw SpawnFailure(program: arguments[0], errno: spawned)
        }
        // The input, then end of file. A program that does not read it gives EPIPE (MSG_NOSIGNAL:
        // no SIGPIPE for the daemon), not a hang.
        var written = 0
        while written < input.count {
            let count = input[written...].withUnsafeBytes { send(inputPipe[1], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 { if errno == EINTR { continue }; break }
            written += count
        }
        close(inputPipe[1])
        _ = fcntl(output[0], F_SETFL, fcntl(output[0], F_GETFL) | O_NONBLOCK)
        defer { close(output[0]) }
        var kept: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func drain() {
            while true {
                let count = buffer.withUnsafeMutableBytes { read(output[0], $0.baseAddress, $0.count) }
                if count <= 0 { return }
                if kept.count < outputLimit { kept += buffer.prefix(min(count, outputLimit - kept.count)) }
            }
        }
        let deadline = ContinuousClock.now + timeLimit
        var status: Int32 = 0
        while true {
            var waiting = pollfd(fd: output[0], events: Int16(POLLIN), revents: 0)
            _ = poll(&waiting, 1, 20)
            drain()
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid { break }
            if ContinuousClock.now >= deadline {
                kill(-pid, SIGKILL)
                waitpid(pid, &status, 0)
                drain()
                return Outcome(ending: .timedOut, output: text(kept))
            }
        }
        drain()
        let ending: Outcome.Ending = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
        return Outcome(ending: ending, output: text(kept))
    }

    private static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { $0.trimmingCharacters() }.joined(separator: " | ")
    }
}

private extension Substring {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\r" || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\r" || $0 == "\t" }.reversed())
    }
}
