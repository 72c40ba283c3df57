public struct ClipSource: Sendable, Hashable {
    public var file: String
    public var path: String
    /// When set, the file actually opened must lie inside this folder (after every symlink is
    /// followed), or it is refused: set for files a client named by path, so swapping one for
    /// a symlink after it was checked cannot make the daemon read a file outside the folder.
    public var within: String?

    public init(file: String, path: String, within: String? = nil) {
        self.file = file
        self.path = path
        self.within = within
    }
}
