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
