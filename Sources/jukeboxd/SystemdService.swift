import JukeboxCore
import Logging
import ServiceLifecycle

/// Reports the daemon's life to systemd: `STOPPING=1` as shutdown begins, and `WATCHDOG=1`
/// pings while the core answers and no output call has been stuck for `stallLimit`, so a
/// driver wedged in a device call stops the pings and systemd restarts the daemon. `READY=1` is sent by the wiring
/// once the control socket listens.
struct SystemdService: Service {
    /// No output call takes this long when the device works: a write waits at most a
    /// period, a drain at most the buffer, and opening even a Bluetooth device a few seconds.
    static let stallLimit = Jukebox.stallLimit

    let notifier: SystemdNotifier
    let core: Jukebox
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
                if let stall = core.outputStall(), stall > Self.stallLimit {
                    logger.critical("the audio output has been stuck in one call for \(DurationText.format(stall)); no more watchdog pings, so systemd restarts the daemon")
                } else {
                    notifier.send("WATCHDOG=1")
                }
                guard (try? await Task.sleep(for: watchdog)) != nil else { return }
            }
        }
        notifier.send("STOPPING=1")
    }
}
