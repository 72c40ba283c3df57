/// A file could not be written.
public struct FileWriteError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var errno: Int32

    public init(path: String, errno: Int32) {
        self.path = path
        self.errno = errno
    }

    public var description: String { "cannot write \(path): \(FileReadError.words(for: errno, writing: true))" }
}
