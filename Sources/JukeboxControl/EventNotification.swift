import JukeboxCore
import JukeboxProtocol

extension JukeboxEvent {
    /// The JSON-RPC notification line for this event.
    public var notificationLine: [UInt8] {
        let (method, params) = notification
        return RPCCoding.notification(method, params)
    }

    public var notification: (method: String, params: EventParams) {
        switch self {
        case .queued(let entry, let position): ("queued", EventParams(entry: EntryInfo(entry, position: position)))
        case .playing(let entry): ("playing", EventParams(entry: EntryInfo(entry)))
        case .finished(let entry, let outcome):
            ("finished", EventParams(entry: EntryInfo(entry), outcome: outcome.name, reason: outcome.reason))
        case .removed(let tickets): ("removed", EventParams(tickets: tickets))
        case .paused: ("paused", EventParams())
        case .resumed: ("resumed", EventParams())
        case .scheduled(let next): ("scheduled", EventParams(nextPick: next))
        case .device(let state): ("device", EventParams(state: state.description))
        case .sessionReloaded(let name, let clips): ("session", EventParams(session: name, clips: clips))
        }
    }
}
