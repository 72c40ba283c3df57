#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// The catalog's file work: editing the session file, and taking uploaded clips into the
/// clips folder. The session file stays the one source of truth: an edit reads it, refuses
/// if someone changed it by hand since the daemon read it, changes the document, checks the
/// result with the session loader, and writes the whole file atomically (keeping the
/// previous one as `.SESSION.json.bak`, a name no upload can take). The core then applies
/// the new session like a reload, and orders edits and reloads (one at a time).
///
/// Every file is read and written on its own thread, never on the cooperative pool.
public struct SessionEditor: Sendable {
    /// The command line's overrides (`--device`), applied to a session an edit produces.
    public typealias SessionOverrides = @Sendable (Session) -> Session

    let decoder: any ClipDecoder
    /// Converts uploads the decoder cannot read (ffmpeg), if there is one.
    let converter: (any AudioConverter)?
    let sessionOverrides: SessionOverrides
    let logger: Logger
    /// Reads and writes session files and uploads off the cooperative pool.
    let io = BlockingWorkQueue(label: "jukebox.session")
    /// How many uploads are under way, from every front end.
    let uploads = UploadGate()
    /// What uploads keep their pace by (`ClipUpload.Pace`).
    let clock: ElapsedClock

    public init(
        decoder: any ClipDecoder, converter: (any AudioConverter)? = nil, sessionOverrides: @escaping SessionOverrides = { $0 },
        clock: ElapsedClock = ElapsedClock(ContinuousClock()), logger: Logger
    ) {
        self.clock = clock
        self.decoder = decoder
        self.converter = converter
        self.sessionOverrides = sessionOverrides
        self.logger = logger
    }

    /// The session file of `session`, as the daemon read it.
    func document(of session: Session) async throws(JukeboxError) -> SessionDocument {
        let bytes = try await readSessionFile(of: session)
        do {
            return try SessionDocument(parsing: bytes, path: session.sourcePath)
        } catch {
            throw .editInvalid(problems: error.problems)
        }
    }

    /// Makes `edit` to the file of `current` and writes it; returns the session it now
    /// holds and the id of the clip concerned. Returns once the file is on disk.
    func write(_ edit: SessionEdit, to current: Session) async throws(JukeboxError) -> (edited: Session, clipID: String?) {
        let bytes = try await readSessionFile(of: current)
        var document: SessionDocument
        do {
            document = try SessionDocument(parsing: bytes, path: current.sourcePath)
        } catch {
            throw .editInvalid(problems: error.problems)
        }
        let clipID = try await apply(edit, to: &document, in: current)
        let text = document.formatted()
        let edited: Session
        do {
            edited = sessionOverrides(try SessionLoader.parse(text, path: current.sourcePath))
        } catch {
            throw .editInvalid(problems: error.problems)
        }
        let path = current.sourcePath
        do {
            try await io.run {
                var info = stat()
                let mode = stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o644
                try AtomicFile.write(bytes, to: AtomicFile.hiddenSibling(of: path, suffix: ".bak"), mode: mode)
                try AtomicFile.write(text, to: path, mode: mode)
            }
        } catch {
            let permission = (error as? FileWriteError).map { FileReadError.isPermission($0.errno) } ?? false
            throw .sessionNotSaved(reason: "\(error)\(permission ? " (the daemon's user must be able to write the session file's folder)" : "")")
        }
        logger.notice("session edited through the API (\(edit.command.rawValue)\(clipID.map { " \($0)" } ?? "")); saved to \(path)",
                      metadata: clipID.map { ["clip": "\($0)"] } ?? [:])
        return (edited, clipID)
    }

    /// The session file's bytes, if they are still those the daemon read.
    private func readSessionFile(of session: Session) async throws(JukeboxError) -> [UInt8] {
        let path = session.sourcePath
        let bytes: [UInt8]
        let read = await io.run { Result { () throws(FileReadError) in try FilePath.read(path, limit: SessionLoader.maxFileSize) } }
        switch read {
        case .success(let read): bytes = read
        // Gone: changed on disk, as much as an edit by hand.
        case .failure(let error) where error.isMissing: throw .sessionChangedOnDisk(path: path)
        case .failure(let error): throw .sessionNotSaved(reason: "cannot read \(path) again before writing it: \(error)")
        }
        guard SessionDocument.revision(of: bytes) == session.revision else { throw .sessionChangedOnDisk(path: path) }
        return bytes
    }

    /// Changes `document`; returns the id of the clip concerned.
    private func apply(_ edit: SessionEdit, to document: inout SessionDocument, in session: Session) async throws(JukeboxError) -> String? {
        switch edit {
        case .addClip(let fields):
            try allow(fields, Clip.fields, "addClip")
            guard case .string(let file)? = fields["file"] else { throw .invalidParameter("addClip needs \"file\": a file inside the clips folder") }
            try await checkClipFile(file, in: session)
            let id = fields["id"].flatMap { if case .string(let id) = $0 { id } else { nil } } ?? SessionReader.defaultID(file: file)
            if let taken = session.clip(id: id) {
                throw .invalidParameter("the id \"\(id)\" is already used by the clip of \(taken.source.file); give another id")
            }
            document.clips.append(.object(fields.filter { $0.value != .null }))
            return id
        case .updateClip(let id, let fields):
            try allow(fields, Clip.fields, "updateClip")
            guard let index = document.clipIndex(id: id), case .object(var clip) = document.clips[index] else {
                throw .unknownClip(id, suggestions: ClipResolver(catalog: ClipCatalog(session: session)).suggestions(for: id))
            }
            if case .string(let file)? = fields["file"] { try await checkClipFile(file, in: session) }
            // A clip named after its file keeps its id when its file changes.
            if clip["id"] == nil, fields["file"] != nil, fields["id"] == nil { clip["id"] = .string(id) }
            var newID = id
            if case .string(let renamed)? = fields["id"], renamed != id {
                if let taken = session.clip(id: renamed) {
                    throw .invalidParameter("the id \"\(renamed)\" is already used by the clip of \(taken.source.file); give another id")
                }
                newID = renamed
            }
            for (key, value) in fields {
                if value == .null || (key == "windows" && value == .array([])) { clip.removeValue(forKey: key) } else { clip[key] = value }
            }
            document.clips[index] = .object(clip)
            return newID
        case .removeClip(let id, _):
            guard let index = document.clipIndex(id: id) else {
                throw .unknownClip(id, suggestions: ClipResolver(catalog: ClipCatalog(session: session)).suggestions(for: id))
            }
            document.clips.remove(at: index)
            return id
        case .updateSchedule(let fields):
            try allow(fields, SessionEdit.scheduleFields, "updateSchedule")
            var fields = fields
            if case .string(let cue)? = fields["cue"] {
                // A clip's id stands for its file.
                let file = session.clip(id: cue)?.source.file ?? cue
                try await checkClipFile(file, in: session)
                fields["cue"] = .string(file)
            }
            for (key, value) in fields {
                if value == .null || (key == "activeHours" && value == .array([])) {
                    document.fields.removeValue(forKey: key)
                } else {
                    document.fields[key] = value
                }
            }
            return nil
        }
    }

    private func allow(_ fields: [String: JSONValue], _ names: [String], _ method: String) throws(JukeboxError) {
        if let unknown = fields.keys.sorted().first(where: { !names.contains($0) }) {
            throw .invalidParameter("\(method) has no field \"\(unknown)\" (it takes " + names.map { "\"\($0)\"" }.joined(separator: ", ") + ")")
        }
    }

    /// A file an edit names must be inside the clips folder and play.
    private func checkClipFile(_ file: String, in session: Session) async throws(JukeboxError) {
        let path = FilePath.normalize(FilePath.join(session.clipsDirectory, file))
        let folder = FilePath.resolved(session.clipsDirectory) ?? session.clipsDirectory
        guard FilePath.isInside(path, session.clipsDirectory), FilePath.isInside(FilePath.resolved(path) ?? path, folder) else {
            throw .outsideClipsDirectory(file)
        }
        do {
            _ = try await decoder.probe(ClipSource(file: file, path: path, within: session.clipsDirectory))
        } catch {
            throw .unplayable(file, reason: "\(error)")
        }
    }

    /// Deletes a removed clip's file unless the session (another clip, the cue) or an entry
    /// still to play (`queued`) uses it. Returns whether it was deleted, or why it was kept.
    func deleteIfUnused(_ source: ClipSource, in edited: Session, queued: [QueueEntry]) async -> (deleted: Bool, kept: String?) {
        if let other = edited.clips.first(where: { $0.source.path == source.path }) {
            return (false, "the clip \(other.id) uses it too")
        }
        if edited.cue?.path == source.path { return (false, "it is the session's cue") }
        if let entry = queued.first(where: { $0.clip.source.path == source.path || $0.cue?.source.path == source.path }) {
            return (false, "ticket \(entry.ticket) is still to play it")
        }
        guard FilePath.isInside(FilePath.resolved(source.path) ?? source.path, FilePath.resolved(edited.clipsDirectory) ?? edited.clipsDirectory) else {
            return (false, "it is outside the clips folder")
        }
        let path = source.path
        let removed = await io.run { unlink(path) == 0 ? nil : FileReadError(errno: errno) }
        if let removed { return (false, "it could not be deleted: \(removed)") }
        logger.info("deleted \(source.file), no longer used by the session", metadata: ["file": "\(source.file)"])
        return (true, nil)
    }
}
