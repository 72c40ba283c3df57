/// Why a session could not be loaded. `problems` holds one line per problem, each naming
/// the file and the field, ready to print as they are.
public struct SessionLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The session file does not exist or cannot be read (sysexits EX_NOINPUT).
        case unreadable
        /// The file was read but is not a valid session (sysexits EX_DATAERR).
        case invalid
    }

    public var kind: Kind
    public var problems: [String]
    /// The clips and cue that could still be read, so `--check` can open their files too.
    public var clips: [Clip]
    public var cue: ClipSource?

    public init(kind: Kind, problems: [String], clips: [Clip] = [], cue: ClipSource? = nil) {
        self.kind = kind
        self.problems = problems
        self.clips = clips
        self.cue = cue
    }

    public var description: String { problems.joined(separator: "\n") }

    /// The process exit status that matches `kind`, from sysexits.h.
    public var exitCode: Int32 { kind == .unreadable ? 66 : 65 }
}
