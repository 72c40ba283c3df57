public struct Clip: Sendable, Equatable, Identifiable {
    /// A clip's keys in the session file, which the reader allows and edits may set.
    public static let fields = ["id", "file", "title", "weight", "gain", "windows", "at", "dates", "except", "priority", "duck", "enabled"]

    public var id: String
    public var source: ClipSource
    public var title: String
    public var weight: Int
    public var gainDecibels: Double
    /// Empty means always allowed.
    public var windows: [TimeWindow]
    /// The dates the clip may be picked on (`dates`, `except`).
    public var dates: DateFilter = .always
    /// The moments the clip is queued by itself (`at`).
    public var at: [FixedTime] = []
    /// Whether the scheduler's random picks include it: a clip with `at` times is left out of
    /// the bag unless the session also gives it a `weight`.
    public var isShuffled = true
    /// Whether its `at` times cut in (`"priority": "now"`): a bell rings on its second, and
    /// the clip playing then goes on after it (the session's `afterCut`).
    public var priority: Priority = .normal
    /// Whether other players are lowered while it sounds (the session's `duck`); false for a
    /// chime that should stay quiet under the music.
    public var ducks = true
    public var enabled: Bool

    public enum Priority: String, Sendable, Equatable, CaseIterable {
        /// Queued at its time in front of what waits, after the clip playing now.
        case normal
        /// Cuts in at its time, whatever is playing.
        case now
    }

    public init(
        id: String, source: ClipSource, title: String? = nil, weight: Int = 1, gainDecibels: Double = 0,
        windows: [TimeWindow] = [], enabled: Bool = true
    ) {
        self.id = id
        self.source = source
        self.title = title ?? id
        self.weight = weight
        self.gainDecibels = gainDecibels
        self.windows = windows
        self.enabled = enabled
    }
}

/// An audio file: as written in the session (for messages) and resolved to an absolute path.
