/// The audio device as `status` and `device` events report it.
public enum DeviceState: Sendable, Equatable, CustomStringConvertible {
    case closed
    case open
    case retrying(after: Duration, error: AudioDeviceError)

    public var isRetrying: Bool {
        if case .retrying = self { true } else { false }
    }

    public var description: String {
        switch self {
        case .closed: "closed"
        case .open: "ok"
        case .retrying(let delay, let error): "retrying in \(DurationText.format(delay)): \(error.reason)"
        }
    }
}
