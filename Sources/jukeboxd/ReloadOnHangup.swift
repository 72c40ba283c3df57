import JukeboxCore
import Logging
import ServiceLifecycle
import UnixSignals

/// SIGHUP re-reads the session file, exactly like `jukebox reload`.
struct ReloadOnHangup: Service {
    let jukebox: Jukebox
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                do {
                    _ = try await jukebox.durable(try await jukebox.reload())
                } catch {
                    logger.error("SIGHUP: \(error)")
                }
            }
        }
    }
}
