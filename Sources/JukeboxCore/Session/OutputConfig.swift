/// Where clips are played: the session's `output` section, or its `device` (and
/// `--device`), which are shorthand for an ALSA output. The daemon builds the output from
/// this; the player never knows which kind it has.
public enum OutputConfig: Sendable, Equatable, CustomStringConvertible {
    /// An ALSA PCM, as `aplay -L` lists them: `default`, `plughw:CARD=Device,DEV=0`…
    case alsa(device: String)

    public static let types = ["alsa"]

    /// The output as people name it in messages and `status`.
    public var description: String {
        switch self {
        case .alsa(let device): device
        }
    }
}
