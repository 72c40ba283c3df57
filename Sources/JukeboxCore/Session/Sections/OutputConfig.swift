/// Where clips are played: the session's `output` section, or its `device` (and
/// `--device`), which are shorthand for an ALSA output. The daemon builds the output from
/// this; the player never knows which kind it has.
public enum OutputConfig: Sendable, Equatable, CustomStringConvertible {
    /// An ALSA PCM, as `aplay -L` lists them: `default`, `plughw:CARD=Device,DEV=0`…
    case alsa(device: String)
    /// snapserver's `pipe://` source: PCM in `format`, for multi-room playback.
    case snapcast(pipe: String, format: StreamFormat)

    public static let types = ["alsa", "snapcast"]

    /// The output as people name it in messages and `status`.
    public var description: String {
        switch self {
        case .alsa(let device): device
        case .snapcast(let pipe, let format): "snapcast:\(pipe) (\(format))"
        }
    }

    /// `--output`: `alsa:DEVICE`, or `snapcast:PIPE` (in Snapcast's default format, 48000:16:2).
    public static func parse(commandLine text: String) -> OutputConfig? {
        if text.hasPrefix("snapcast:"), text.count > 9 { return .snapcast(pipe: String(text.dropFirst(9)), format: .snapcastDefault) }
        if text.hasPrefix("alsa:"), text.count > 5 { return .alsa(device: String(text.dropFirst(5))) }
        return nil
    }
}

// The session's section: its reader, its checks and its messages.
extension SessionReader {
    /// `output: {"type": "alsa", "device": …}`, `{"type": "snapcast", "pipe": …, "format":
    /// "48000:16:2"}`, or the `device` shorthand; not both.
    mutating func output(_ fields: [String: JSONValue], sessionDirectory: String) -> OutputConfig {
        let device = fields["device"].flatMap { nonEmptyString($0, at: "device") }
        guard let value = fields["output"] else { return .alsa(device: device ?? "default") }
        if fields["device"] != nil {
            problem("output", "give either \"output\" or \"device\", not both (\"device\" is shorthand for an ALSA output)")
        }
        guard let section = object(value, at: "output", allowed: Self.outputKeys) else { return .alsa(device: "default") }
        let types = OutputConfig.types.map { "\"\($0)\"" }.joined(separator: " or ")
        func refuse(_ keys: [String], in output: String) {
            for key in keys where section[key] != nil { problem("output.\(key)", "is not used by \(output)") }
        }
        switch section["type"] {
        case nil:
            problem("output.type", "missing (expected \(types))")
        case .string("alsa")?:
            refuse(["pipe", "format"], in: "an ALSA output")
        case .string("snapcast")?:
            refuse(["device"], in: "a Snapcast output")
            var format = StreamFormat.snapcastDefault
            if let value = section["format"], let text = nonEmptyString(value, at: "output.format") {
                switch StreamFormat.parse(text) {
                case .success(let parsed): format = parsed
                case .failure(let problem): self.problem("output.format", "\(value.shortDescription) \(problem.text)")
                }
            }
            guard let pipe = section["pipe"].flatMap({ nonEmptyString($0, at: "output.pipe") }) else {
                if section["pipe"] == nil { problem("output.pipe", "missing (the FIFO snapserver's pipe:// source reads, such as \"/run/snapserver/jukeboxd\")") }
                return .alsa(device: "default")
            }
            return .snapcast(pipe: FilePath.normalize(FilePath.join(sessionDirectory, pipe)), format: format)
        case let other?:
            problem("output.type", "\(other.shortDescription) is not an output type (expected \(types))")
        }
        return .alsa(device: section["device"].flatMap { nonEmptyString($0, at: "output.device") } ?? "default")
    }

    static let outputKeys = ["type", "device", "pipe", "format"]
}
