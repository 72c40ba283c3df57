import Foundation
import Glibc
import Subprocess

/// Every program a test starts ends with the test process, however that ends (a crash, a
/// SIGKILL, a time limit): each joins the process group of a guard, a shell the test process
/// starts first, whose standard input is a pipe only the test process holds. When the test
/// process ends, the pipe closes, and the guard kills its whole group: brokers, daemons, MPDs,
/// the PulseAudio rig, and what they started in the group.
///
/// Start programs with `Subprocess.run(…, platformOptions: TestProcesses.options, …)`, or with
/// `spawn` where a test needs a bare pid. (A program run as another user, through `userID`,
/// stays in the test's own group: swift-subprocess then ignores `processGroupID`.)
public enum TestProcesses {
    /// The guard's process group, or nil where it could not be started (the programs then
    /// run as before, in the test process's group).
    public static let group: pid_t? = startGuard()

    /// What every `Subprocess.run` in the tests passes.
    public static var options: PlatformOptions {
        var options = PlatformOptions()
        options.processGroupID = group
        return options
    }

    private static func startGuard() -> pid_t? {
        var ends: [Int32] = [-1, -1]
        // pipe2 with O_CLOEXEC, so no program another test starts at this moment inherits
        // the write end (Glibc's module map leaves pipe2 out: it is found by name).
        typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2"),
              unsafeBitCast(symbol, to: Pipe2.self)(&ends, O_CLOEXEC) == 0 else { return nil }
        // The write end stays open, close-on-exec, for the life of the test process: no
        // program started later holds it, so it closes exactly when the test process ends.
        defer { close(ends[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[0], 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        // `read` ends at end of file; `kill 0` reaches every process of the guard's group.
        let script = "while read -r _; do :; done; kill -KILL 0"
        let arguments = ["/bin/sh", "-c", script, "jukebox-test-guard"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ) == 0 else {
            close(ends[1])
            return nil
        }
        return pid
    }

    /// Starts `path` with `arguments` in the guard's group, its outputs on `output` (a
    /// descriptor, or /dev/null), and returns its pid; the caller waits for it.
    public static func spawn(_ path: String, _ arguments: [String], environment: [String: String]? = nil, output: Int32? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let output {
            posix_spawn_file_actions_adddup2(&actions, output, 1)
            posix_spawn_file_actions_adddup2(&actions, output, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if let group {
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
            posix_spawnattr_setpgroup(&attributes, group)
        }
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        return pid
    }

    /// Waits for `pid` (started by `spawn`) and returns its exit status, or nil when a
    /// signal ended it. Blocking.
    public static func wait(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : nil
    }
}
