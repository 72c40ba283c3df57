/// The state could not be written.
public struct StateFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var errno: Int32
    public var description: String { "cannot write the state file \(path): \(FileReadError(errno: errno)) (errno \(errno))" }
}
