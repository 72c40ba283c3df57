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

// The session's section: its reader, its checks and its messages.
extension SessionReader {
    static let hookKeys = Hooks.Moment.allCases.map(\.rawValue) + ["timeLimit"]

    /// `hooks: {"beforePlaying": ["gpioset", "gpiochip0", "17=1"], "afterPlaying": […],
    /// "idle": […], "timeLimit": "5s"}`: argument lists, never a shell command line.
    mutating func hooks(_ value: JSONValue) -> Hooks {
        var hooks = Hooks()
        guard let fields = object(value, at: "hooks", allowed: Self.hookKeys) else { return hooks }
        for moment in Hooks.Moment.allCases {
            guard let value = fields[moment.rawValue] else { continue }
            let at = "hooks.\(moment.rawValue)"
            guard case .array(let items) = value, (1...Hooks.maxArguments).contains(items.count) else {
                problem(at, Self.listProblem(value, of: "words", described: "words, the program first", limit: Hooks.maxArguments, example: #"["gpioset", "gpiochip0", "17=1"]; no shell is run"#))
                continue
            }
            if let words = words(items, at: at) { hooks.commands[moment] = words }
        }
        if let value = fields["timeLimit"], let limit = duration(value, at: "hooks.timeLimit") {
            if Hooks.timeLimitRange.contains(limit) { hooks.timeLimit = limit } else {
                problem("hooks.timeLimit", "\(value.shortDescription) is out of range (100ms to 60s)")
            }
        }
        return hooks
    }
}
