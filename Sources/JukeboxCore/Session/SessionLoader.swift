/// Reads and validates a session file (format version 1). Every problem is collected, not
/// just the first, and each is reported as `file:line: field.path: what is wrong`, in the
/// order of the file's lines, the way compilers report them so editors can jump there.
public enum SessionLoader {
    /// The largest session file read: far beyond any real session (100 000 clips is about
    /// 8 MB), small enough that a wrong path costs no memory worth mentioning.
    public static let maxFileSize = 16 << 20

    public static func load(path: String) throws(SessionLoadError) -> Session {
        let bytes: [UInt8]
        do {
            bytes = try FilePath.read(path, limit: maxFileSize)
        } catch {
            throw SessionLoadError(kind: .unreadable, problems: ["\(path): \(error)"])
        }
        return try parse(bytes, path: path)
    }

    /// Parses session text; `path` names the file in messages and anchors relative paths.
    public static func parse(_ bytes: [UInt8], path: String) throws(SessionLoadError) -> Session {
        let revision = SessionDocument.revision(of: bytes)
        let bytes = withoutByteOrderMark(bytes)
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            let what = error.validJSON ? "\(error.reason) for any field" : "not valid JSON: \(error.reason)"
            throw SessionLoadError(kind: .invalid, problems: ["\(path):\(error.line):\(error.column): \(what)"])
        }
        var reader = SessionReader(sessionPath: path)
        // The order of a calendar's summaries matters (the first listed wins), and so does the
        // order alerts are shown in; an object does not keep it: where each key starts says.
        if case .object(let fields) = document, fields["plans"] != nil || fields["alerts"] != nil { reader.keyOffsets = JSONParser.offsets(in: bytes) }
        let session = reader.session(from: document)
        guard var session, reader.problems.isEmpty else {
            throw SessionLoadError(kind: .invalid, problems: located(reader.problems, in: bytes, path: path), clips: reader.clips, cue: reader.cue)
        }
        session.revision = revision
        return session
    }

    /// Each problem with the line of its field (or of the nearest enclosing one present, for
    /// a missing field), sorted by line; problems on one line keep the order they were found.
    static func located(_ problems: [(field: String, message: String)], in bytes: [UInt8], path: String) -> [String] {
        let lines = JSONParser.lines(in: bytes)
        func line(of field: String) -> Int {
            var field = Substring(field)
            while lines[String(field)] == nil, let cut = field.lastIndex(where: { $0 == "." || $0 == "[" }) {
                field = field[..<cut]
            }
            return lines[String(field)] ?? lines[""] ?? 1
        }
        return problems.map { (line: line(of: $0.field), problem: $0) }
            .enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
            .map { entry in
                let (line, problem) = entry.element
                return "\(path):\(line): " + (problem.field.isEmpty ? problem.message : "\(problem.field): \(problem.message)")
            }
    }

    /// Editors on some systems start UTF-8 files with a byte order mark; it means nothing here.
    static func withoutByteOrderMark(_ bytes: [UInt8]) -> [UInt8] {
        bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
    }

    /// Where a message about the session's device, found after the file was read, is placed:
    /// `PATH:LINE: device`, on the line of `device`, `output.device` or `output` (the first
    /// line when the file names none).
    public static func deviceField(in path: String) -> String {
        let bytes = (try? FilePath.read(path, limit: maxFileSize)).map(withoutByteOrderMark) ?? []
        let lines = JSONParser.lines(in: bytes)
        let line = ["device", "output.device", "output"].lazy.compactMap { lines[$0] }.first ?? 1
        return "\(path):\(line): device"
    }

    /// The line of each clip in the session file, by clip id, and of the cue: for messages
    /// about clip files, which are found after the file was read (`--check`). Empty when the
    /// file cannot be read or parsed.
    public static func lines(ofClipsIn path: String) -> (clips: [String: Int], cue: Int?) {
        guard let bytes = (try? FilePath.read(path, limit: maxFileSize)).map(withoutByteOrderMark) else { return ([:], nil) }
        guard case .object(let fields)? = try? JSONParser.parse(bytes), case .array(let items)? = fields["clips"] else { return ([:], nil) }
        let lines = JSONParser.lines(in: bytes)
        var clips: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            guard case .object(let clip) = item, let line = lines["clips[\(index)]"] else { continue }
            let id: String? = switch (clip["id"], clip["file"]) {
            case (.string(let id)?, _): id
            case (_, .string(let file)?): SessionReader.defaultID(file: file)
            default: nil
            }
            if let id, clips[id] == nil { clips[id] = line }
        }
        return (clips, lines["cue"])
    }
}
