import Glibc
import JukeboxCore
import JukeboxProtocol

/// Converts uploads libsndfile cannot read (a phone's M4A/AAC, a browser's WebM/Opus) to FLAC
/// with ffmpeg. ffmpeg runs from an argument list, never through a shell, with no input,
/// on its own thread, and is killed if it takes longer than `timeLimit`.
struct FFmpegConverter: AudioConverter {
    /// Longer than any clip of `maxUploadSize` takes to convert on a Pi.
    static let timeLimit: Duration = .seconds(120)
    /// How much of ffmpeg's own message is kept for the error.
    static let maxMessage = 2048

    let executable: String
    private let queue = BlockingWorkQueue(label: "jukebox.ffmpeg")

    /// ffmpeg from `PATH`, or nil when it is not installed.
    static func find(environment: [String: String] = ProcessEnvironment.current) -> FFmpegConverter? {
        let folders = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        for folder in folders where access("\(folder)/ffmpeg", X_OK) == 0 {
            return FFmpegConverter(executable: "\(folder)/ffmpeg")
        }
        return nil
    }

    func convertToFLAC(_ input: String, _ output: String) async throws(ConversionFailure) {
        let arguments = [
            executable, "-nostdin", "-hide_banner", "-loglevel", "error", "-n", "-i", input,
            "-map", "0:a:0", "-map_metadata", "-1", "-c:a", "flac", "-f", "flac", output,
        ]
        let failure: String? = await queue.run { Self.run(arguments, log: output + ".log") }
        if let failure { throw ConversionFailure(failure) }
    }

    /// Runs ffmpeg and waits for it; nil on success, else why it failed.
    private static func run(_ arguments: [String], log: String) -> String? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { unlink(log) }
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard spawned == 0 else { return "ffmpeg could not be started: \(FileReadError(errno: spawned))" }
        let deadline = ContinuousClock.now + timeLimit
        var status: Int32 = 0
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid { break }
            if done < 0, errno != EINTR { return "waiting for ffmpeg failed: \(FileReadError(errno: errno))" }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                return "ffmpeg took longer than \(DurationText.format(timeLimit)) and was stopped"
            }
            usleep(20_000)
        }
        let exited = status & 0x7F == 0
        if exited, (status >> 8) & 0xFF == 0 { return nil }
        let message = (try? FilePath.read(log, limit: 1 << 20)).map { String(decoding: $0.prefix(maxMessage), as: UTF8.self) } ?? ""
        let said = message.split(separator: "\n").last.map { ": \($0)" } ?? ""
        return exited ? "ffmpeg exited with status \((status >> 8) & 0xFF)\(said)" : "ffmpeg was killed by signal \(status & 0x7F)"
    }
}
