import NIOCore
import Synchronization

/// The live client connections: when each last sent something and whether it follows
/// events, so the server can cap their number, close idle ones, and close every reading
/// side on shutdown.
final class OpenConnections: Sendable {
    private struct Connection {
        var channel: any Channel
        var lastActive: ContinuousClock.Instant
        var subscribed = false
        /// In the middle of an upload's bytes.
        var uploading = false
    }

    enum Admission {
        /// Served; `evicted` was closed to make room.
        case admitted(evicted: (any Channel)?)
        /// Shutting down, or every connection is subscribed.
        case refused
    }

    private struct State {
        var open: [ObjectIdentifier: Connection] = [:]
        var closing = false
        /// The idle sweep, waiting for a first connection (see `waitForAConnection`).
        var sweeper: CheckedContinuation<Void, Never>?
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = limit }

    func add(_ channel: any Channel, now: ContinuousClock.Instant) -> Admission {
        let (admission, sweeper) = state.withLock { state -> (Admission, CheckedContinuation<Void, Never>?) in
            guard !state.closing else { return (.refused, nil) }
            var evicted: (any Channel)?
            if state.open.count >= limit {
                guard let oldest = state.open.filter({ !$0.value.subscribed }).min(by: { $0.value.lastActive < $1.value.lastActive }) else {
                    return (.refused, nil)
                }
                evicted = state.open.removeValue(forKey: oldest.key)?.channel
            }
            state.open[ObjectIdentifier(channel)] = Connection(channel: channel, lastActive: now)
            defer { state.sweeper = nil }
            return (.admitted(evicted: evicted), state.sweeper)
        }
        sweeper?.resume()
        return admission
    }

    /// Returns once a connection is open (at once if one is), or on cancellation. The idle
    /// sweep waits here rather than waking the daemon on a timer while no client is connected.
    func waitForAConnection() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    // Cancelled before the handler below could see a waiter: do not wait.
                    guard state.open.isEmpty, !state.closing, !Task.isCancelled else { return true }
                    state.sweeper = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state in
                defer { state.sweeper = nil }
                return state.sweeper
            }?.resume()
        }
    }

    func touch(_ channel: any Channel, now: ContinuousClock.Instant) {
        state.withLock { $0.open[ObjectIdentifier(channel)]?.lastActive = now }
    }

    func markSubscribed(_ channel: any Channel) {
        state.withLock { $0.open[ObjectIdentifier(channel)]?.subscribed = true }
    }

    func markUploading(_ channel: any Channel, _ uploading: Bool) {
        state.withLock { $0.open[ObjectIdentifier(channel)]?.uploading = uploading }
    }

    /// Unsubscribed connections silent since before `cutoff`, and those in an upload silent
    /// since before `uploadCutoff`; they are forgotten here. Each says whether it was uploading.
    func idle(since cutoff: ContinuousClock.Instant, uploadingSince uploadCutoff: ContinuousClock.Instant) -> [(channel: any Channel, uploading: Bool)] {
        state.withLock { state in
            let idle = state.open.filter { _, connection in
                connection.uploading ? connection.lastActive < uploadCutoff : !connection.subscribed && connection.lastActive < cutoff
            }
            for key in idle.keys { state.open.removeValue(forKey: key) }
            return idle.values.map { ($0.channel, $0.uploading) }
        }
    }

    func remove(_ channel: any Channel) {
        _ = state.withLock { $0.open.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    func closeAllInputs() {
        let open = state.withLock { state in
            state.closing = true
            return state.open.values.map(\.channel)
        }
        for channel in open { channel.close(mode: .input, promise: nil) }
    }
}
