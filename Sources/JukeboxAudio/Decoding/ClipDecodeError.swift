/// A clip that cannot be played: names the file and says why.
public struct ClipDecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var reason: String

    public init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }

    public var description: String { "\(file): \(reason)" }
}
