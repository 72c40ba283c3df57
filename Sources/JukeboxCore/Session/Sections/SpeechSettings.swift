/// The session's `tts`: the speech engine that turns `say` text into a clip. `command` is an
/// argument list run without a shell; in each word `{out}` becomes the WAV file to write and
/// `{text}` the text. Without `{text}` the text goes to the engine's standard input.
public struct SpeechSettings: Sendable, Equatable {
    public var command: [String]
    /// An engine still running after this long is killed, and that announcement fails.
    public var timeLimit: Duration

    /// espeak-ng from Debian, reading the text from standard input (so no text, however it
    /// begins, can be taken for one of its options).
    public static let defaultCommand = ["espeak-ng", "-w", "{out}", "--stdin"]
    public static let defaultTimeLimit: Duration = .seconds(30)
    /// `timeLimit` may be from 1 s to 5 min (a large neural voice on a Pi Zero is slow).
    public static let timeLimitRange: ClosedRange<Duration> = .seconds(1) ... .seconds(300)
    /// The longest text to speak, in characters: about a minute of speech.
    public static let maxTextLength = 1000
    public static let outPlaceholder = "{out}"
    public static let textPlaceholder = "{text}"

    public init(command: [String] = defaultCommand, timeLimit: Duration = defaultTimeLimit) {
        self.command = command
        self.timeLimit = timeLimit
    }

    /// Does the engine take the text as an argument (else on standard input)?
    public var textInArguments: Bool { command.contains { $0.contains(Self.textPlaceholder) } }

    /// The argument list for one run. A text that begins with `-` is given with a space in
    /// front where it is a word of its own, so an engine cannot read it as an option.
    public func arguments(text: String, out: String) -> [String] {
        command.map { word in
            let spoken = word == Self.textPlaceholder && text.hasPrefix("-") ? " " + text : text
            return word.replacing(Self.outPlaceholder, with: out).replacing(Self.textPlaceholder, with: spoken)
        }
    }
}

// The session's section: its reader, its checks and its messages.
extension SessionReader {
    static let speechKeys = ["command", "timeLimit"]

    /// `tts: {"command": ["espeak-ng", "-w", "{out}", "--stdin"], "timeLimit": "30s"}`, or
    /// the command list alone.
    mutating func speech(_ value: JSONValue) -> SpeechSettings {
        var settings = SpeechSettings()
        let command: JSONValue?
        if case .array = value {
            command = value
        } else {
            guard let fields = object(value, at: "tts", allowed: Self.speechKeys) else { return settings }
            command = fields["command"]
            if let value = fields["timeLimit"], let limit = duration(value, at: "tts.timeLimit") {
                if SpeechSettings.timeLimitRange.contains(limit) { settings.timeLimit = limit } else {
                    problem("tts.timeLimit", "\(value.shortDescription) is out of range (1s to 5m)")
                }
            }
        }
        guard let command else { return settings }
        let at = "tts.command"
        let example = "such as [\"espeak-ng\", \"-w\", \"{out}\", \"--stdin\"]; no shell is run"
        guard case .array(let items) = command, (1...Hooks.maxArguments).contains(items.count) else {
            problem(at, Self.listProblem(command, of: "words", described: "words, the program first", limit: Hooks.maxArguments, example: example.replacing("such as ", with: "")))
            return settings
        }
        guard let words = words(items, at: at) else { return settings }
        if !words.contains(where: { $0.contains(SpeechSettings.outPlaceholder) }) {
            problem(at, "has no \"{out}\", the WAV file the engine is to write (\(example))")
        } else if words[0].contains("{") {
            problem(at, "the program, \(items[0].shortDescription), cannot be a placeholder")
        } else {
            settings.command = words
        }
        return settings
    }
}
