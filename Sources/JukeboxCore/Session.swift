/// A validated session: everything `jukeboxd` needs to run, with defaults filled in and
/// every path made absolute. Produced by `SessionLoader`; never built from unchecked input.
public struct Session: Sendable, Equatable {
    public var name: String
    /// The session file as the user named it; error messages use this spelling.
    public var sourcePath: String
    public var clipsDirectory: String
    public var device: String
    public var interval: ClosedRange<Duration>
    /// Empty means always active.
    public var activeHours: [TimeWindow]
    /// nil means run until stopped.
    public var duration: Duration?
    public var cue: ClipSource?
    /// Master volume, 0...1.
    public var volume: Double
    /// Lead-in, fades and what to do with the device between clips.
    public var playback: PlaybackOptions
    public var clips: [Clip]

    public static let defaultInterval: ClosedRange<Duration> = .seconds(600) ... .seconds(1800)

    public init(
        name: String, sourcePath: String, clipsDirectory: String, device: String = "default",
        interval: ClosedRange<Duration> = Session.defaultInterval, activeHours: [TimeWindow] = [],
        duration: Duration? = nil, cue: ClipSource? = nil, volume: Double = 1,
        playback: PlaybackOptions = PlaybackOptions(), clips: [Clip]
    ) {
        self.name = name
        self.sourcePath = sourcePath
        self.clipsDirectory = clipsDirectory
        self.device = device
        self.interval = interval
        self.activeHours = activeHours
        self.duration = duration
        self.cue = cue
        self.volume = volume
        self.playback = playback
        self.clips = clips
    }

    public func clip(id: String) -> Clip? { clips.first { $0.id == id } }
}

/// A session clip as configured.
public struct Clip: Sendable, Equatable, Identifiable {
    public var id: String
    public var source: ClipSource
    public var title: String
    public var weight: Int
    public var gainDecibels: Double
    /// Empty means always allowed.
    public var windows: [TimeWindow]
    public var enabled: Bool

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
public struct ClipSource: Sendable, Hashable {
    public var file: String
    public var path: String
    /// When set, the file actually opened must lie inside this folder (after every symlink is
    /// followed), or it is refused: set for files a client named by path, so swapping one for
    /// a symlink after it was checked cannot make the daemon read a file outside the folder.
    public var within: String?

    public init(file: String, path: String, within: String? = nil) {
        self.file = file
        self.path = path
        self.within = within
    }
}
