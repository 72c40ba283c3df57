/// One slot in the play queue: a clip, the cue to play before it, who asked for it, whether
/// it cuts in (`urgent`), and where it goes on from after a cut (`resumeAt`).
public struct QueueEntry: Sendable, Identifiable, Equatable {
    public enum Origin: Sendable, Equatable, CustomStringConvertible {
        case scheduler
        /// A clip's `at` time came; the moment it was due, in seconds since the epoch.
        case fixedTime(Int64)
        case client(Requester)

        /// The one word for it everywhere (`queue`, the history, the page, MQTT's events):
        /// `scheduler`, `fixed-time`, or the name of whoever asked.
        public var description: String {
            switch self {
            case .scheduler: "scheduler"
            case .fixedTime: "fixed-time"
            case .client(let requester): requester.name
            }
        }

        /// Whoever asked for it; nil when the daemon queued it itself.
        public var requester: Requester? { if case .client(let requester) = self { requester } else { nil } }

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
    /// How it is played, when it was asked for otherwise than the volume and the whole clip
    /// (Home Assistant's siren: `volume_level` and `duration`).
    public var playing: Playing
    /// The alert it sounds for (its name): a sounding of the alert, or its `end` clip. It
    /// silences the other players and the bed, and nothing cuts it.
    public var alert: String?

    /// A level of its own and a length to stop at.
    public struct Playing: Sendable, Equatable {
        /// The level (0–1) it plays at, cue included, in place of the volume, which a change
        /// of volume does not alter; nil: the volume.
        public var volume: Double?
        /// The clip stops after this much of it, fading out; nil: it plays to its end.
        public var stopAfter: Duration?
        /// `volume` is an alert's level, which `maxVolume` does not hold either.
        public var aboveCeiling = false

        public static let asIs = Playing()

        /// The lengths a clip may be stopped after: from a tenth of a second to a day.
        public static let stopAfterRange: ClosedRange<Duration> = .milliseconds(100) ... .seconds(24 * 3600)

        /// `seconds` as a length to stop after; nil when it is not a number within the range.
        public static func stopAfter(seconds: Double) -> Duration? {
            guard seconds.isFinite, seconds >= stopAfterRange.lowerBound.secondsDouble, seconds <= stopAfterRange.upperBound.secondsDouble else { return nil }
            return .milliseconds(Int64((seconds * 1000).rounded()))
        }

        public init(volume: Double? = nil, stopAfter: Duration? = nil, aboveCeiling: Bool = false) {
            self.volume = volume.map { $0.isFinite ? min(max($0, 0), 1) : 1 }
            self.stopAfter = stopAfter
            self.aboveCeiling = aboveCeiling && volume != nil
        }

        /// An alert's sounding: at `level`, whatever the volume and `maxVolume` say.
        public static func alert(level: Double) -> Playing { Playing(volume: level, aboveCeiling: true) }
    }

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

    public init(
        ticket: UInt64, clip: PlayableClip, cue: PlayableClip? = nil, origin: Origin, urgent: Bool = false, resumeAt: ResumePoint? = nil, playing: Playing = .asIs,
        alert: String? = nil
    ) {
        self.alert = alert
        self.playing = playing
        self.ticket = ticket
        self.clip = clip
        self.cue = cue
        self.origin = origin
        self.urgent = urgent
        self.resumeAt = resumeAt
    }
}
