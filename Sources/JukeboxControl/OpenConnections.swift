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

    private let limit: Int
    private let state = Mutex<(open: [ObjectIdentifier: Connection], closing: Bool)>(([:], false))

    init(limit: Int) { self.limit = limit }

    func add(_ channel: any Channel, now: ContinuousClock.Instant) -> Admission {
        state.withLock { state in
            guard !state.closing else { return .refused }
            var evicted: (any Channel)?
            if state.open.count >= limit {
                guard let oldest = state.open.filter({ !$0.value.subscribed }).min(by: { $0.value.lastActive < $1.value.lastActive }) else {
                    return .refused
                }
                evicted = state.open.removeValue(forKey: oldest.key)?.channel
            }
            state.open[ObjectIdentifier(channel)] = Connection(channel: channel, lastActive: now)
            return .admitted(evicted: evicted)
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
