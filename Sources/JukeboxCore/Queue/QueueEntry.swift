/// One slot in the play queue: a clip, the cue to play before it, who asked for it, whether
/// it cuts in (`urgent`), and where it goes on from after a cut (`resumeAt`).
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
    /// Asked for with `now`: it goes before every entry that is not urgent, and cuts the clip
    /// playing if that one is not urgent itself.
    public var urgent: Bool
    /// Set once an urgent entry cut it: where it goes on from (`afterCut: resume`), or its
    /// start, to play it again with its cue (`restart`). nil: never cut.
    public var resumeAt: ResumePoint?

    /// Where in a clip it goes on from: the clip frame, and how far into the clip that is.
    public struct ResumePoint: Sendable, Equatable, Codable {
        public var frame: Int
        public var seconds: Double

        public static let start = ResumePoint(frame: 0, seconds: 0)

        public init(frame: Int, seconds: Double) {
            self.frame = max(0, frame)
            self.seconds = max(0, seconds)
        }
    }

    public var id: UInt64 { ticket }

    public init(ticket: UInt64, clip: PlayableClip, cue: PlayableClip? = nil, origin: Origin, urgent: Bool = false, resumeAt: ResumePoint? = nil) {
        self.ticket = ticket
        self.clip = clip
        self.cue = cue
        self.origin = origin
        self.urgent = urgent
        self.resumeAt = resumeAt
    }
}
