/// The session's commands: reading it as a document, editing it, and adding uploaded clips.
/// The file work is the editor's (`SessionEditor`); the rules here are the core's: one
/// reload or edit at a time, an edit against the revision the client saw, the new session
/// applied like a reload, and the answer durable before it is given.
extension Jukebox {
    /// The session file as the daemon read it, and the session with every default resolved.
    public func sessionDocument() async throws(JukeboxError) -> (document: SessionDocument, session: Session) {
        await lockSession()
        defer { unlockSession() }
        return (try await editor.document(of: session), session)
    }

    public func edit(_ edit: SessionEdit, ifRevision: String? = nil) async throws(JukeboxError) -> Acknowledged<SessionEdited> {
        await lockSession()
        defer { unlockSession() }
        let current = session
        if let ifRevision, ifRevision != current.revision { throw .revisionMismatch(given: ifRevision, current: current.revision) }
        let (edited, clipID) = try await editor.write(edit, to: current)
        await adopt(edited, reprobe: false)
        var result = SessionEdited(revision: edited.revision, clip: nil, fileDeleted: false)
        if case .removeClip(_, true) = edit, let removed = current.clip(id: clipID ?? "") {
            let queue = await queue.snapshot()
            let queued = (queue.current.map { [$0] } ?? []) + Array(queue.waiting)
            (result.fileDeleted, result.fileKept) = await editor.deleteIfUnused(removed.source, in: edited, queued: queued)
        } else if let clipID {
            result.clip = await snapshot().clips.first { $0.clip.id == clipID }
        }
        return await acknowledge(result, edit.command)
    }

    /// Starts receiving a file of `size` bytes. One larger than the session's `maxUploadSize`
    /// is refused before any byte is stored.
    public func beginUpload(name: String, size: Int) throws(JukeboxError) -> ClipUpload {
        try editor.beginUpload(name: name, size: size, in: session)
    }

    /// Starts an upload whose size is known only once it has all come (a file in a form): up
    /// to the session's `maxUploadSize` bytes may arrive, and more is refused as they come.
    public func beginUpload(name: String) throws(JukeboxError) -> ClipUpload {
        try editor.beginUpload(name: name, in: session)
    }

    /// The session's `maxUploadSize`.
    public var maxUploadSize: Int { session.maxUploadSize }

    /// Adds a clip whose file came as an upload: checked and stored by the editor (see
    /// `SessionEditor.store`), then added with `fields` (`id`, `title`…) like any edit.
    /// Whatever fails, no file of the upload is left behind.
    public func addClip(upload: ClipUpload, fields: [String: JSONValue], ifRevision: String? = nil) async throws(JukeboxError) -> Acknowledged<SessionEdited> {
        // Without an id given, the clip is named after its file: a name whose id a clip has
        // already is passed over for a numbered one.
        let taken = fields["id"] == nil ? Set(session.clips.map(\.id)) : []
        let stored = try await editor.store(upload, limits: UploadLimits(session), takenIDs: taken)
        var fields = fields
        fields["file"] = .string(stored)
        do {
            let added = try await edit(.addClip(fields), ifRevision: ifRevision)
            logger.info("stored the upload \(upload.name) as \(stored)", metadata: ["file": "\(stored)"])
            // Measured before the answer, so that a recording plays at the session's
            // loudness from its first play.
            if let source = session.clips.first(where: { $0.source.file == stored })?.source {
                await loudness.measureNow(source)
            }
            return added
        } catch {
            await editor.discard(stored: stored, in: upload.clipsDirectory)
            throw error
        }
    }
}
