/// An output that plays music under the clips (the session's `bed`): what `status` shows of
/// it, and the switch `jukebox bed off|on` turns. The player finds it on the output it is
/// given; an output without a bed is not one.
public protocol MusicBed: Sendable {
    var bedState: MusicBedState { get }
    /// Off mutes the music (over a short fade) and on brings it back; clips play either way.
    func setMusicOn(_ on: Bool)
}

/// The music bed as `status` shows it.
public struct MusicBedState: Sendable, Equatable {
    public enum Music: String, Sendable, Equatable {
        /// Music is coming in through the pipe and plays.
        case playing
        /// Nothing has come in lately: the player feeding the pipe is stopped or paused.
        case waiting
    }

    /// The FIFO the music comes in through.
    public var pipe: String
    public var on: Bool
    public var music: Music
    /// The music is lowered under a clip.
    public var ducked: Bool
    /// Why the pipe cannot be read, when it cannot (not a FIFO, no permission).
    public var problem: String?

    public init(pipe: String, on: Bool, music: Music, ducked: Bool, problem: String? = nil) {
        self.pipe = pipe
        self.on = on
        self.music = music
        self.ducked = ducked
        self.problem = problem
    }
}
