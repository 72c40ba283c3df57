/// One slot in the play queue: a clip, the cue to play before it, and who asked for it.
public struct QueueEntry: Sendable, Identifiable, Equatable {
    public enum Origin: Sendable, Equatable, CustomStringConvertible {
        case scheduler
        /// A clip's `at` time came; the moment it was due, in seconds since the epoch.
        case fixedTime(Int64)
        case client(String)

        public var description: String {
            switch self {
            case .scheduler: "scheduler"
            case .fixedTime: "timetable"
            case .client(let name): name
            }
        }

        /// Queued by a client, rather than by the daemon itself.
        public var isClient: Bool { if case .client = self { true } else { false } }

        public var isFixedTime: Bool { if case .fixedTime = self { true } else { false } }
    }

    /// Ticket ids increase in acceptance order and are never reused while the daemon runs.
    public var ticket: UInt64
    public var clip: PlayableClip
    public var cue: PlayableClip?
    public var origin: Origin

    public var id: UInt64 { ticket }

    public init(ticket: UInt64, clip: PlayableClip, cue: PlayableClip? = nil, origin: Origin) {
        self.ticket = ticket
        self.clip = clip
        self.cue = cue
        self.origin = origin
    }
}
