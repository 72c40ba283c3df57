import DequeModule

/// Everything `status`, `queue`, `clips` and `history` show, taken at one moment: the queue's
/// figures in one hop to the queue and the player's in one hop to the player, so no answer
/// mixes two clips.
public struct JukeboxSnapshot: Sendable {
    public var catalog: ClipCatalog
    public var queue: ClipPlayQueue.Snapshot
    public var player: Player.Snapshot
    /// When the scheduler picks next, in seconds since the Unix epoch; nil while picks are
    /// held back (paused, a clip waiting for the device, the last pick still waiting).
    public var nextPick: Double?
    /// Whether it is quiet now, why, and until when.
    public var quiet: QuietHours.Status
    /// Seconds since the core started.
    public var uptime: Double
    /// Local time when the snapshot was taken, for clips' windows.
    public var localTime: LocalTime
    /// The other players lowered or paused now (`duck`), by name.
    public var ducked: [String] = []
    /// Whether a clip that ducks the others sounds now (Home Assistant's Ducking sensor).
    public var ducking = false
    /// Today's and tomorrow's day plans; nil without plans.
    public var todayPlan: DayPlan?
    public var tomorrowPlan: DayPlan?
    /// The day plans' calendars as last read.
    public var calendars: [CalendarFeeds.State] = []

    public var session: Session { catalog.session }

    /// One clip of the session as `clips` shows it.
    public struct ClipState: Sendable {
        public var clip: Clip
        public var duration: Duration?
        public var problem: String?
        /// The clip's own windows and the session's active hours both allow it now.
        public var windowOpen: Bool
        public var stats: ClipStats
    }

    public var clips: [ClipState] {
        session.clips.map { clip in
            ClipState(
                clip: clip, duration: catalog.durations[clip.id], problem: catalog.problems[clip.id],
                windowOpen: clip.windows.allow(localTime) && session.activeHours.allow(localTime),
                stats: queue.stats[clip.id] ?? ClipStats())
        }
    }

    /// The device as `status` and `device` events show it: the player's.
    public var deviceState: DeviceState { player.device }

    /// The volume as every front end shows and sets it, within `Jukebox.volumeRange`.
    public var volume: Int { Int((player.volume * Double(Jukebox.volumeRange.upperBound)).rounded()) }

    /// How far into the clip playing now, or paused, playback is, and how long the clip is.
    public var position: (elapsed: Duration, total: Duration)? { player.position ?? queue.pausedPosition }

    /// The entry being played now; nil while the head of the queue waits for its device.
    public var playing: QueueEntry? { deviceState.isRetrying ? nil : queue.current }

    /// The entry at the head of the queue while it waits for a missing device.
    public var waitingForDevice: QueueEntry? { deviceState.isRetrying ? queue.current : nil }

    /// The newest `limit` plays, newest first.
    public func history(limit: Int) -> [PlayRecord] { queue.history.suffix(max(limit, 0)).reversed() }
}
