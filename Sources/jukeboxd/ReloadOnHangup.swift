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
                    logger.error("SIGHUP: \(error)")
                }
            }
        }
    }
}
