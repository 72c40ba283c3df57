/// What happened in the daemon, as clients that follow events see it.
public enum JukeboxEvent: Sendable, Equatable {
    case queued(QueueEntry, position: Int)
    case playing(QueueEntry)
    case finished(QueueEntry, PlayOutcome)
    case removed([UInt64])
    case paused
    case resumed
    /// The scheduler's next pick, in seconds since the Unix epoch (nil: none planned).
    case scheduled(nextPickEpochSeconds: Double?)
    case device(DeviceState)
    case sessionReloaded(name: String, clips: Int)
}

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
