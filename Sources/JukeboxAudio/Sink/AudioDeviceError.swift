/// A problem with the audio device. `code` is stable for scripts and events; the
/// description names the device, what was attempted, the driver's reason and a hint.
public struct AudioDeviceError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let notFound = Code(rawValue: "device-not-found")
        public static let busy = Code(rawValue: "device-busy")
        public static let permissionDenied = Code(rawValue: "permission-denied")
        public static let unsupportedFormat = Code(rawValue: "unsupported-format")
        public static let disconnected = Code(rawValue: "device-disconnected")
        public static let stalled = Code(rawValue: "device-stalled")
        public static let ioError = Code(rawValue: "io-error")
    }

    public var code: Code
    public var device: String
    /// What was being done: "open", "write", "drain"…
    public var operation: String
    /// The driver's own words, e.g. ALSA's `snd_strerror`.
    public var reason: String
    public var hint: String?

    public init(code: Code, device: String, operation: String, reason: String, hint: String? = nil) {
        self.code = code
        self.device = device
        self.operation = operation
        self.reason = reason
        self.hint = hint
    }

    public var description: String {
        "audio device \"\(device)\": cannot \(operation): \(reason)" + (hint.map { " (\($0))" } ?? "")
    }
}
