/// The state could not be written.
public struct StateFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var errno: Int32
    /// Said instead of the errno's meaning when the write was refused rather than attempted.
    public var detail: String?

    public init(path: String, errno: Int32, detail: String? = nil) {
        self.path = path
        self.errno = errno
        self.detail = detail
    }

    public var description: String {
        if let detail { return "not saving the state file \(path): \(detail)" }
        return "cannot write the state file \(path): \(FileReadError.words(for: errno, writing: true)); it still holds the state last saved"
    }
}
