/// The session's `hooks`: programs run around playback, each an argument list run without a
/// shell (`["gpioset", "gpiochip0", "17=1"]`), with the clip in environment variables.
public struct Hooks: Sendable, Equatable {
    public enum Moment: String, Sendable, CaseIterable {
        /// After the previous clip and before this one's cue: time to power an amplifier on.
        case beforePlaying
        /// Once a clip has ended, however it ended.
        case afterPlaying
        /// Once the device has been released after playing (see `keepDeviceOpen`).
        case idle
    }

    public var commands: [Moment: [String]]
    /// A hook still running after this long is killed; the queue waits no longer.
    public var timeLimit: Duration

    public static let defaultTimeLimit: Duration = .seconds(5)
    /// `timeLimit` may be from 100 ms to 60 s.
    public static let timeLimitRange: ClosedRange<Duration> = .milliseconds(100) ... .seconds(60)
    /// An argument list may have this many words, each this many bytes.
    public static let maxArguments = 64
    public static let maxArgumentLength = 4096

    public init(commands: [Moment: [String]] = [:], timeLimit: Duration = defaultTimeLimit) {
        self.commands = commands
        self.timeLimit = timeLimit
    }
}
