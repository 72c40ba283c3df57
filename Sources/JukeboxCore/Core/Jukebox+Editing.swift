#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Editing the session through the API. The session file stays the one source of truth: an
/// edit reads it, refuses if someone changed it by hand since the daemon read it, changes the
/// document, checks the result with the session loader, writes the whole file atomically
/// (keeping the previous one as `.SESSION.json.bak`, a name no upload can take), and applies it like a reload. It returns
/// once the file is on disk.
extension Jukebox {
    /// The session file as the daemon read it, and the session with every default resolved.
    public func sessionDocument() async throws(JukeboxError) -> (document: SessionDocument, session: Session) {
        await lockSession()
        defer { unlockSession() }
        let bytes = try await readSessionFile()
        do {
            return (try SessionDocument(parsing: bytes, path: session.sourcePath), session)
        } catch {
            throw .editInvalid(problems: error.problems)
        }
    }

    public func edit(_ edit: SessionEdit, ifRevision: String? = nil) async throws(JukeboxError) -> Acknowledged<SessionEdited> {
        await lockSession()
        defer { unlockSession() }
        let current = session
        if let ifRevision, ifRevision != current.revision { throw .revisionMismatch(given: ifRevision, current: current.revision) }
        let bytes = try await readSessionFile()
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
            try await sessionIO.run {
                var info = stat()
                let mode = stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o644
                try AtomicFile.write(bytes, to: AtomicFile.hiddenSibling(of: path, suffix: ".bak"), mode: mode)
                try AtomicFile.write(text, to: path, mode: mode)
            }
        } catch {
            let permission = (error as? FileWriteError).map { FileReadError.isPermission($0.errno) } ?? false
            throw .sessionNotSaved(reason: "\(error)\(permission ? " (the daemon's user must be able to write the session file's folder)" : "")")
        }
        await adopt(edited, reprobe: false)
        logger.notice("session edited through the API (\(edit.command.rawValue)\(clipID.map { " \($0)" } ?? "")); saved to \(path)",
                      metadata: clipID.map { ["clip": "\($0)"] } ?? [:])
        var result = SessionEdited(revision: edited.revision, clip: nil, fileDeleted: false)
        if case .removeClip(_, true) = edit, let removed = current.clip(id: clipID ?? "") {
            (result.fileDeleted, result.fileKept) = await deleteIfUnused(removed.source, in: edited)
        } else if let clipID {
            result.clip = await snapshot().clips.first { $0.clip.id == clipID }
        }
        return await acknowledge(result, edit.command)
    }

    /// The session file's bytes, if they are still those the daemon read.
    private func readSessionFile() async throws(JukeboxError) -> [UInt8] {
        let path = session.sourcePath
        let bytes: [UInt8]
        let read = await sessionIO.run { Result { () throws(FileReadError) in try FilePath.read(path, limit: SessionLoader.maxFileSize) } }
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
            try allow(fields, SessionEdit.clipFields, "addClip")
            guard case .string(let file)? = fields["file"] else { throw .invalidParameter("addClip needs \"file\": a file inside the clips folder") }
            try await checkClipFile(file, in: session)
            let id = fields["id"].flatMap { if case .string(let id) = $0 { id } else { nil } } ?? SessionReader.defaultID(file: file)
            if let taken = session.clip(id: id) {
                throw .invalidParameter("the id \"\(id)\" is already used by the clip of \(taken.source.file); give another id")
            }
            document.clips.append(.object(fields.filter { $0.value != .null }))
            return id
        case .updateClip(let id, let fields):
            try allow(fields, SessionEdit.clipFields, "updateClip")
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
    /// still waiting to play uses it. Returns whether it was deleted, or why it was kept.
    private func deleteIfUnused(_ source: ClipSource, in edited: Session) async -> (deleted: Bool, kept: String?) {
        if let other = edited.clips.first(where: { $0.source.path == source.path }) {
            return (false, "the clip \(other.id) uses it too")
        }
        if edited.cue?.path == source.path { return (false, "it is the session's cue") }
        let queue = await snapshot().queue
        if let entry = ((queue.current.map { [$0] } ?? []) + queue.waiting).first(where: { $0.clip.source.path == source.path || $0.cue?.source.path == source.path }) {
            return (false, "ticket \(entry.ticket) is still to play it")
        }
        guard FilePath.isInside(FilePath.resolved(source.path) ?? source.path, FilePath.resolved(edited.clipsDirectory) ?? edited.clipsDirectory) else {
            return (false, "it is outside the clips folder")
        }
        let path = source.path
        let removed = await sessionIO.run { unlink(path) == 0 ? nil : FileReadError(errno: errno) }
        if let removed { return (false, "it could not be deleted: \(removed)") }
        logger.info("deleted \(source.file), no longer used by the session", metadata: ["file": "\(source.file)"])
        return (true, nil)
    }
}
