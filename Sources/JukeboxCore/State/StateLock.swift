#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The state file held for the daemon's life, so that two daemons never share one state file
/// and overwrite each other's queue. The lock (`flock`) is on a file of its own beside the
/// state, `.NAME.json.lock`, since the state file itself is replaced on every write; it holds
/// the pid of the daemon that has it, for the other's message. The kernel lets go of it when
/// the process ends, however it ends, so a crash never leaves it held.
public final class StateLock: Sendable {
    public let path: String
    private let descriptor: Int32

    /// Takes the lock for the state file at `statePath`, or says who has it (exit 75).
    public init(statePath: String, pid: pid_t = getpid()) throws(StateLocationError) {
        path = AtomicFile.hiddenSibling(of: statePath, suffix: ".lock")
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StateLocationError(message: "cannot open \(path), which keeps two jukeboxd from sharing the state file \(statePath): \(FileReadError.words(for: errno, writing: true)); choose another state file with --state", exitCode: 73)
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.pid(in: descriptor)
            close(descriptor)
            let who = holder.map { "another jukeboxd (pid \($0))" } ?? "another jukeboxd"
            throw StateLocationError(
                message: "the state file \(statePath) is in use by \(who); stop that one first, or give this one its own --state (and its own --socket)", exitCode: 75)
        }
        self.descriptor = descriptor
        let text = Array("\(pid)\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    deinit { close(descriptor) }

    private static func pid(in descriptor: Int32) -> Int? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int(String(decoding: bytes.prefix(count).prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self))
    }
}
