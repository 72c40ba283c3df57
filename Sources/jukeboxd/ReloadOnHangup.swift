import JukeboxCore
import Logging
import ServiceLifecycle
import UnixSignals

/// SIGHUP re-reads the session file, exactly like `jukebox reload`.
struct ReloadOnHangup: Service {
    let core: Jukebox
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                do {
                    _ = try await core.durable(try await core.reload())
                } catch {
                    // A line each: the log writes a line break inside a message as "\n".
                    if case .sessionInvalid(let problems)? = error as? JukeboxError {
                        logger.error("SIGHUP: the session file was not reloaded; the running session is unchanged (\(Plural.count(problems.count, "problem")) follow)")
                        for problem in problems { logger.error("SIGHUP: \(problem)") }
                    } else {
                        logger.error("SIGHUP: \(error)")
                    }
                }
            }
        }
    }
}
