import Synchronization

/// The session's schedule: what plays by itself and when (the random picks' interval, clips
/// and windows, active hours, the `at` times), what is quiet, and how loud it plays. It is
/// the session as read, with the clips that can play.
public struct Schedule: Sendable {
    /// The session as read: its `interval`, `duration`, `activeHours`, `cue`, `location`,
    /// `holidays`, `atGrace`, `quiet`, `volume`, volume steps and `maxVolume` are what the
    /// parts keep to.
    public let session: Session
    /// The clips that can play: the session's, less those that could not be opened.
    public let clips: [Clip]

    public init(_ session: Session, playable clips: [Clip]? = nil) {
        self.session = session
        self.clips = clips ?? session.clips
    }
}

/// The schedule in force, held once and read by every part that keeps to it: the scheduler
/// (`ClipJukebox`), the `at` times (`ClipTimetable`), `QuietHours`, `VolumeControl`, and
/// `jukebox next`. None keeps a copy. A reload puts a new one in place with one assignment
/// (`replace`), then tells each part, which takes up what changed for it (the bag's clips,
/// a new level, a sleep cut short) before the reload is answered.
public final class ScheduleBoard: Sendable {
    /// Takes up a change, from the schedule before it; the new one is `current`.
    public typealias Follower = @Sendable (_ old: Schedule) async -> Void

    private let state: Mutex<(schedule: Schedule, followers: [Follower])>

    public init(_ schedule: Schedule) {
        state = Mutex((schedule, []))
    }

    public convenience init(_ session: Session, playable clips: [Clip]? = nil) {
        self.init(Schedule(session, playable: clips))
    }

    /// The schedule in force now.
    public var current: Schedule { state.withLock { $0.schedule } }

    /// Adds a part to tell of every change; parts are told in the order they were added.
    public func follow(_ follower: @escaping Follower) {
        state.withLock { $0.followers.append(follower) }
    }

    /// Puts `schedule` in force, and returns once every part has taken it up.
    public func replace(with schedule: Schedule) async {
        let (old, followers) = state.withLock { state in
            defer { state.schedule = schedule }
            return (state.schedule, state.followers)
        }
        for follower in followers { await follower(old) }
    }
}
