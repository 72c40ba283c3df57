#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Clips that arrive as bytes from a client (the daemon cannot read files in a person's home
/// folder): received into the clips folder, checked, stored under a safe name, and added to
/// the session like any other clip.
extension Jukebox {
    /// Starts receiving a file of `size` bytes. One larger than the session's `maxUploadSize`
    /// is refused before any byte is stored.
    public func beginUpload(name: String, size: Int) throws(JukeboxError) -> ClipUpload {
        let limit = session.maxUploadSize
        guard size > 0 else { throw .invalidParameter("\"size\" must be the file's size in bytes, at least 1") }
        guard size <= limit else { throw .uploadTooLarge(name: ClipUpload.safeName(name), size: size, limit: limit) }
        return try ClipUpload(name: name, size: size, clipsDirectory: session.clipsDirectory, io: sessionIO, logger: logger)
    }

    /// Starts an upload whose size is known only once it has all come (a file in a form): up
    /// to the session's `maxUploadSize` bytes may arrive, and more is refused as they come.
    public func beginUpload(name: String) throws(JukeboxError) -> ClipUpload {
        try ClipUpload(name: name, size: session.maxUploadSize, exact: false, clipsDirectory: session.clipsDirectory, io: sessionIO, logger: logger)
    }

    /// The session's `maxUploadSize`.
    public var maxUploadSize: Int { session.maxUploadSize }

    /// Adds a clip whose file came as an upload. The file is decoded completely first; one the
    /// decoder cannot read is converted to FLAC when a converter (ffmpeg) is there. It is then
    /// stored under a safe name that no file has yet, and added with `fields` (`id`, `title`…).
    /// Whatever fails, no file of the upload is left behind.
    public func addClip(upload: ClipUpload, fields: [String: JSONValue], ifRevision: String? = nil) async throws(JukeboxError) -> Acknowledged<SessionEdited> {
        // The received file and its conversion are removed whatever happens; once stored,
        // the received file has already moved to its name.
        var leftovers = [upload.temporaryPath, upload.temporaryPath + ".flac"]
        do {
            return try await addUploaded(upload, fields: fields, ifRevision: ifRevision, leftovers: &leftovers)
        } catch {
            await remove(leftovers)
            throw error
        }
    }

    private func remove(_ paths: [String]) async {
        await sessionIO.run { for path in paths { unlink(path) } }
    }

    private func addUploaded(
        _ upload: ClipUpload, fields: [String: JSONValue], ifRevision: String?, leftovers: inout [String]
    ) async throws(JukeboxError) -> Acknowledged<SessionEdited> {
        let received: String
        do {
            received = try await upload.complete()
        } catch {
            await upload.discard()
            throw error
        }
        var playable = received
        var name = ClipUpload.safeName(upload.name)
        if let refusal = await decodeCompletely(received, as: name) {
            guard let converter else {
                throw .unplayable(name, reason: "\(refusal); if it is a recording in another format, install ffmpeg on jukeboxd's machine (sudo apt-get install ffmpeg) so jukeboxd converts it, or convert it to WAV or FLAC yourself")
            }
            let converted = received + ".flac"
            do {
                try await converter.convertToFLAC(received, converted)
            } catch {
                throw .unplayable(name, reason: "\(refusal), and converting it with ffmpeg failed: \(error)")
            }
            if let still = await decodeCompletely(converted, as: name) { throw .unplayable(name, reason: "converted with ffmpeg, it still cannot be played: \(still)") }
            playable = converted
            name = FilePath.removingExtension(name) + ".flac"
        }
        let stored = try await store(playable, as: name, in: upload.clipsDirectory)
        leftovers.append(FilePath.join(upload.clipsDirectory, stored))
        var fields = fields
        fields["file"] = .string(stored)
        let added = try await edit(.addClip(fields), ifRevision: ifRevision)
        leftovers.removeLast()
        await remove(leftovers)
        logger.info("stored the upload \(upload.name) as \(stored)", metadata: ["file": "\(stored)"])
        return added
    }

    /// Reads every frame of the file; nil when it plays, else why not.
    private func decodeCompletely(_ path: String, as name: String) async -> String? {
        do {
            let clip = try await decoder.open(ClipSource(file: name, path: path))
            do {
                guard clip.frameCount > 0 else {
                    await clip.close()
                    return "\(name) holds no audio"
                }
                while try await clip.read(maxFrames: 1 << 16) != nil {}
                await clip.close()
            } catch {
                await clip.close()
                throw error
            }
            return nil
        } catch {
            let head = await sessionIO.run { FilePath.head(path, count: 16) }
            let why = (error as? ClipDecodeError)?.reason ?? "\(error)"
            guard let kind = AudioFileKind.describe(head) else { return "\(name): \(why)" }
            return "\(name) is \(kind), which libsndfile cannot read (\(why))"
        }
    }

    /// Gives `path` a name in `folder` that no file has: `name`, else `name-2`, `name-3`…
    /// An existing file is never overwritten (the name is taken with `link`, which fails if
    /// it exists). Returns the name.
    private func store(_ path: String, as name: String, in folder: String) async throws(JukeboxError) -> String {
        let stem = FilePath.removingExtension(name), ext = String(name.dropFirst(stem.count))
        let result: Result<String, JukeboxError> = await sessionIO.run {
            for attempt in 1...1000 {
                let candidate = attempt == 1 ? name : "\(stem)-\(attempt)\(ext)"
                if link(path, FilePath.join(folder, candidate)) == 0 {
                    unlink(path)
                    return .success(candidate)
                }
                if errno != EEXIST { return .failure(.uploadRefused("cannot store \(name) in the clips folder: \(FileReadError(errno: errno))")) }
            }
            return .failure(.uploadRefused("cannot store \(name): \(name) and 999 numbered names are taken in the clips folder"))
        }
        return try result.get()
    }
}
