/// What opening a device for a moment, as the service opens it, found (`jukeboxd --check`, a
/// session loaded or reloaded): nothing wrong, or the problem, with the playback devices the
/// system lists, so that a misspelt name can be put right.
public struct DeviceCheck: Sendable, Equatable {
    /// nil: the device opened (and was closed again).
    public var problem: AudioDeviceError?
    /// The playback devices the system lists (`aplay -L`), read only when the device was not
    /// found; those of sound cards first.
    public var known: [String]

    public init(problem: AudioDeviceError? = nil, known: [String] = []) {
        self.problem = problem
        self.known = known
    }

    public static let ok = DeviceCheck()

    /// A device that is there but in another program's hands plays once that program lets
    /// it go: worth a warning, never a refusal.
    public var isWarning: Bool { problem?.code == .busy }
}

/// Opens the named device for a moment and closes it again.
public typealias DeviceChecker = @Sendable (_ device: String) async -> DeviceCheck
