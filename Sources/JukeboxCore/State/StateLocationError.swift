/// The state file's place cannot be used; `exitCode` follows sysexits.
public struct StateLocationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var exitCode: Int32
    public var description: String { message }

    public init(message: String, exitCode: Int32) {
        self.message = message
        self.exitCode = exitCode
    }
}
