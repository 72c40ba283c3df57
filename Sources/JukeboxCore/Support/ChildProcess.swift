#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// Runs another program from an argument list, never through a shell: hooks, ffmpeg, a speech
/// engine. Its output (stdout and stderr together) is kept up to `outputLimit` bytes and the
/// rest read and dropped, so a chatty program can neither block on a full pipe nor fill memory.
/// It runs in a process group of its own, and at `timeLimit` everything it started is killed:
/// its group, and every descendant, even one that left the group (`setsid`) or whose parent
/// exited. For that the daemon is a child subreaper (`adoptOrphans`): an orphaned descendant
/// becomes the daemon's child rather than init's, so it can still be found, and once it ends
/// it is reaped here. The calling thread waits, so run it on a `BlockingWorkQueue`.
public enum ChildProcess {
    /// Whether the daemon adopts orphaned descendants (`adoptOrphans`).
    private static let adopting = Mutex(false)

    /// Makes this process a child subreaper, so an orphaned descendant of a program run here
    /// stays findable and is ended with it. For the daemon, which starts programs only
    /// through here: any child it did not start is then an orphan of one of them. (Not for a
    /// process that also starts children another way, whose exits this would take.)
    public static func adoptOrphans() {
        let adopted = becomeSubreaper()
        adopting.withLock { $0 = adopted }
        guard adopted else { return }
        // An adopted orphan (a hook's background child) is reaped as it ends, not left a
        // zombie until the next program runs. The daemon's own programs are left to the thread
        // that waits for each (`orphans` never names them).
        let source = DispatchSource.makeSignalSource(signal: SIGCHLD, queue: DispatchQueue(label: "jukeboxd.reaper"))
        source.setEventHandler { reapOrphans() }
        source.resume()
        reaper = source
    }

    /// The SIGCHLD source that reaps adopted orphans, kept for the life of the process.
    /// Set once, at start-up, before any other thread could read it.
    nonisolated(unsafe) private static var reaper: (any DispatchSourceSignal)?

    /// `prctl(PR_SET_CHILD_SUBREAPER, 1)`. Swift cannot call C's variadic `prctl`, so it is
    /// called through a pointer with its five arguments, as the kernel reads them (on x86-64
    /// and AArch64 Linux a variadic callee takes its integer arguments where these go).
    private static func becomeSubreaper() -> Bool {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "prctl") else { return false }
        let setChildSubreaper: Int32 = 36
        return unsafeBitCast(symbol, to: Prctl.self)(setChildSubreaper, 1, 0, 0, 0) == 0
    }
    /// The programs started here and not yet waited for; any other child of the daemon is an
    /// orphan it adopted.
    private static let started = Mutex(Set<pid_t>())
    /// Set once the daemon begins to stop (`endAll`).
    private static let stopping = Mutex(false)

    /// Ends every program running now, at once, and refuses to start more, except those run
    /// `whileStopping` (hooks: the idle hook that switches an amplifier off still runs). For
    /// a stop: a conversion or a speech engine would otherwise hold it up for its whole time
    /// limit. Blocking (it reads /proc): call it off the cooperative pool.
    public static func endAll() {
        // Under the lock a program is registered under: one that starts after this is refused,
        // and one that started before it is in the list ended here.
        let running = started.withLock { started in
            stopping.withLock { $0 = true }
            return Array(started)
        }
        for pid in running { endEverything(pid) }
    }

    /// `setpriv`, which starts each program with SIGKILL as its parent-death signal: if the
    /// daemon is killed outright (SIGKILL, the OOM killer), what it started dies with it
    /// rather than running on under init. nil where it is not installed (it is part of
    /// util-linux, which every Debian system has).
    static let deathSignal: String? = access("/usr/bin/setpriv", X_OK) == 0 ? "/usr/bin/setpriv" : nil

    public struct Outcome: Sendable, Equatable {
        public enum Ending: Sendable, Equatable {
            case exited(Int32)
            case signalled(Int32)
            /// Killed at the time limit.
            case timedOut
            /// Killed because the daemon is stopping (`endAll`).
            case stopped
        }
        public var ending: Ending
        /// What it printed, at most `outputLimit` bytes of it.
        public var output: String

        public var succeeded: Bool { ending == .exited(0) }
    }

    public struct SpawnFailure: Error, Sendable, CustomStringConvertible {
        public var program: String
        public var errno: Int32
        /// Not started because the daemon is stopping.
        public var stopping = false
        public var description: String {
            stopping ? "\(program) was not started: jukeboxd is stopping" : "\(program) could not be started: \(FileReadError(errno: errno))"
        }
        /// No such program (not installed, or a wrong path).
        public var isMissingProgram: Bool { errno == ENOENT }
    }

    /// Why `program` cannot be run (ENOENT: no such file; EACCES: not an executable file), or
    /// nil. A name without a slash is looked up in `path` (a PATH value) as posix_spawnp does.
    static func unrunnable(_ program: String, searching path: String?) -> Int32? {
        func check(_ file: String) -> Int32? {
            var status = stat()
            guard stat(file, &status) == 0 else { return errno == ENOTDIR ? ENOENT : errno }
            guard status.st_mode & S_IFMT == S_IFREG, access(file, X_OK) == 0 else { return EACCES }
            return nil
        }
        if program.contains("/") { return check(program) }
        guard !program.isEmpty else { return ENOENT }
        var found: Int32 = ENOENT
        for folder in (path ?? "/bin:/usr/bin").split(separator: ":", omittingEmptySubsequences: false) {
            let problem = check(folder.isEmpty ? program : "\(folder)/\(program)")
            guard let problem else { return nil }
            if problem == EACCES { found = EACCES }
        }
        return found
    }

    /// Runs `arguments` (the first is the program: a path, or a name looked up in `PATH`) with
    /// `environment` added to the daemon's own, and `input` on its standard input. Once the
    /// daemon is stopping, only a program run `whileStopping` is started.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], input: [UInt8] = [], timeLimit: Duration, outputLimit: Int = 4096,
        whileStopping: Bool = false
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
        let launcher = deathSignal.map { [$0, "--pdeathsig", "KILL", "--"] } ?? []
        let argv = (launcher + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        // A program that is not there, or cannot be run, is reported as such before anything
        // starts: posix_spawn cannot always tell (where it forks rather than vforks, as under
        // qemu-user, the child just exits 127).
        if let problem = unrunnable(arguments[0], searching: merged["PATH"]) {
            close(output[0]); close(inputPipe[1])
            throw SpawnFailure(program: arguments[0], errno: problem)
        }
        var pid: pid_t = 0
        // Registered under the lock that the orphan sweep reads, so a program just started is
        // never taken for an orphan.
        var refusedForStop = false
        let spawned = started.withLock { started in
            if !whileStopping, stopping.withLock({ $0 }) {
                refusedForStop = true
                return ECANCELED
            }
            let result = posix_spawnp(&pid, launcher.first ?? arguments[0], &actions, &attributes, argv, envp)
            if result == 0 { started.insert(pid) }
            return result
        }
        defer {
            started.withLock { _ = $0.remove(pid) }
            reapOrphans()
        }
        close(output[1])
        close(inputPipe[0])
        guard spawned == 0 else {
            close(output[0])
            close(inputPipe[1])
            throw SpawnFailure(program: arguments[0], errno: spawned, stopping: refusedForStop)
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
                let doomed = endEverything(pid)
                waitpid(pid, &status, 0)
                reap(doomed)
                drain()
                return Outcome(ending: .timedOut, output: text(kept))
            }
        }
        drain()
        let ending: Outcome.Ending = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF)
            : stopping.withLock({ $0 }) ? .stopped : .signalled(status & 0x7F)
        return Outcome(ending: ending, output: text(kept))
    }

    /// Kills `pid`'s group, every descendant of it, whatever group or session it is in, and
    /// every orphan the daemon adopted (a descendant whose parent has exited is one of those,
    /// so the two together are everything it started); stopped first, so none can start
    /// another meanwhile.
    @discardableResult
    private static func endEverything(_ pid: pid_t) -> Set<ProcessTable.Entry> {
        kill(-pid, SIGKILL)
        let table = ProcessTable.read()
        var doomed = Set(table.descendants(of: pid)).union(orphans(in: table))
        for entry in doomed { kill(entry.pid, SIGSTOP) }
        // Stopped ones cannot have made more since; take any the first look missed.
        let again = ProcessTable.read()
        doomed.formUnion(again.descendants(of: pid))
        doomed.formUnion(orphans(in: again))
        for entry in doomed where again.entries.contains(entry) {
            kill(-entry.group, SIGKILL)
            kill(entry.pid, SIGKILL)
        }
        reapOrphans()
        return doomed
    }

    /// Waits, up to two seconds, until none of `doomed` (each sent SIGKILL) is left, reaping
    /// each that ends as the daemon's child. A killed program's own children become the
    /// daemon's (it is their subreaper) only once that program has ended and been reaped, so
    /// the sweep in `endEverything` cannot wait for them all.
    private static func reap(_ doomed: Set<ProcessTable.Entry>) {
        guard adopting.withLock({ $0 }), !doomed.isEmpty else { return }
        let me = getpid()
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            let left = doomed.compactMap { ProcessTable.entry($0.pid) }.filter { doomed.contains($0) }
            if left.isEmpty { return }
            for entry in left where entry.parent == me && entry.state == "Z" {
                var status: Int32 = 0
                waitpid(entry.pid, &status, WNOHANG)
            }
            if ContinuousClock.now >= deadline { return }
            usleep(5_000)
        }
    }

    /// The daemon's children that it did not start: orphans of programs it ran.
    private static func orphans(in table: ProcessTable) -> [ProcessTable.Entry] {
        guard adopting.withLock({ $0 }) else { return [] }
        let me = getpid()
        return started.withLock { started in table.entries.filter { $0.parent == me && !started.contains($0.pid) } }
    }

    /// Waits for every adopted orphan that has ended, so none stays a zombie.
    public static func reapOrphans() {
        // Without adopting, there is none, and no reason to read /proc after every program.
        guard adopting.withLock({ $0 }) else { return }
        for orphan in orphans(in: ProcessTable.read()) where orphan.state == "Z" {
            var status: Int32 = 0
            waitpid(orphan.pid, &status, WNOHANG)
        }
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
