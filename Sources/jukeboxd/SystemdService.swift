import JukeboxCore
import Logging
import ServiceLifecycle

/// Reports the daemon's life to systemd: `STOPPING=1` as shutdown begins, and `WATCHDOG=1`
/// pings taken through the player and its device thread, so a player wedged in a device
/// call stops the pings and systemd restarts the daemon. `READY=1` is sent by the wiring
/// once the control socket listens.
struct SystemdService: Service {
    let notifier: SystemdNotifier
    let player: Player
    let watchdog: Duration?
    /// Finishes once `READY=1` has been sent; pings start after it.
    let ready: AsyncStream<Void>
    let logger: Logger

    func run() async throws {
        guard notifier.isActive else {
            // Outside systemd there is nothing to report, but a service that returns would end
            // the whole group: wait for shutdown like the others.
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown {
            for await _ in ready {}
            guard let watchdog else {
                try? await gracefulShutdown()
                return
            }
            while !Task.isCancelled {
                await player.heartbeat()
                notifier.send("WATCHDOG=1")
                guard (try? await Task.sleep(for: watchdog)) != nil else { return }
            }
        }
        notifier.send("STOPPING=1")
    }
}
