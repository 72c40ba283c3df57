/// The music under the clips (the session's `bed`), as the player drives it: the mixer is a
/// stage of the output, between the conversion stage and the device, and the only one that
/// opens that device. It is started when the player takes the output up (`start`), and lets
/// the device go when the output is retired (`AudioSink.retire`), so a new output (a reload
/// that changes the device or the bed) opens the device only after the old one closed it.
public protocol MusicBed: Sendable {
    var bedState: MusicBedState { get }
    /// Whether the mixer has the device open, or is trying it again after a failure.
    var deviceState: MixerDeviceState { get }
    /// Off mutes the music (over a short fade) and on brings it back; clips play either way.
    /// The player owns the switch, and sets it here.
    func setMusicOn(_ on: Bool)
    /// Lowers the music to `percent` of its own level (100: not lowered), gliding there over
    /// a step of the duck policy's ramp; at or under the bed's `level` it is that level.
    func setDuckLevel(_ percent: Int)
    /// Starts the mixer, which opens the device and keeps it until the output is retired.
    /// `musicOn` and `level`: the switch and the ducked level as the player has them.
    /// `deviceChanged` is called, from the mixer's task, each time `deviceState` changes.
    func start(musicOn: Bool, level: Int, deviceChanged: @escaping @Sendable () -> Void)
}

/// The mixer's hold on the device.
public enum MixerDeviceState: Sendable, Equatable {
    /// Not started yet, or started and not yet open.
    case opening
    case open
    /// The device failed or could not be opened; it is tried again in `retryIn`. `missingFor`
    /// is how long it has been failing, near enough (the retries' waits so far).
    case failed(AudioDeviceError, retryIn: Duration, missingFor: Duration)
    /// Retired: the device is let go.
    case closed
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
