#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Clips that arrive as bytes from a client (the daemon cannot read files in a person's home
/// folder): received into the clips folder, checked, and stored under a safe name; the core
/// then adds them to the session like any other clip.
extension SessionEditor {
    /// Starts receiving a file of `size` bytes into `session`'s clips folder. One larger
    /// than the session's `maxUploadSize` is refused before any byte is stored.
    func beginUpload(name: String, size: Int, in session: Session) throws(JukeboxError) -> ClipUpload {
        let limit = session.maxUploadSize
        guard size > 0 else { throw .invalidParameter("\"size\" must be the file's size in bytes, at least 1") }
        guard size <= limit else { throw .uploadTooLarge(name: ClipUpload.safeName(name), size: size, limit: limit) }
        return try ClipUpload(name: name, size: size, clipsDirectory: session.clipsDirectory, ticket: try ticket(), io: io, clock: clock, logger: logger)
    }

    /// A place among the uploads received at once, or `uploadsBusy`.
    private func ticket() throws(JukeboxError) -> UploadGate.Ticket {
        guard let ticket = uploads.enter() else { throw .uploadsBusy(limit: uploads.limit, retryAfter: UploadGate.retryAfter) }
        return ticket
    }

    /// Starts an upload whose size is known only once it has all come (a file in a form): up
    /// to the session's `maxUploadSize` bytes may arrive, and more is refused as they come.
    func beginUpload(name: String, in session: Session) throws(JukeboxError) -> ClipUpload {
        try ClipUpload(name: name, size: session.maxUploadSize, exact: false, clipsDirectory: session.clipsDirectory, ticket: try ticket(), io: io, clock: clock, logger: logger)
    }

    /// Takes a finished upload in: the file is decoded completely first; one the decoder
    /// cannot read is converted to FLAC when a converter (ffmpeg) is there. It is then stored
    /// under a safe name that no file has yet, and whose clip id is none of `takenIDs`;
    /// returns that name. Whatever fails, no file of the upload is left behind.
    func store(_ upload: ClipUpload, limits: UploadLimits, takenIDs: Set<String> = []) async throws(JukeboxError) -> String {
        // The received file and its conversion are removed whatever happens; once stored,
        // the received file has already moved to its name.
        let leftovers = [upload.temporaryPath, upload.temporaryPath + ".flac"]
        do {
            let stored = try await receive(upload, limits: limits, takenIDs: takenIDs)
            await remove(leftovers)
            await upload.release()
            return stored
        } catch {
            await remove(leftovers)
            await upload.release()
            throw error
        }
    }

    /// Removes a stored upload that the session did not take after all (the edit failed).
    func discard(stored name: String, in clipsDirectory: String) async {
        await remove([FilePath.join(clipsDirectory, name)])
    }

    /// Makes `folder` (readable by all, as the clips folder is) if it is not there; why it
    /// cannot be, or nil.
    func makeFolder(_ folder: String) async -> String? {
        await io.run {
            if mkdir(folder, 0o755) == 0 || errno == EEXIST, FilePath.isDirectory(folder) { return nil }
            return FileReadError.words(for: errno, writing: true)
        }
    }

    /// Removes the files in `folder` whose names `remove` picks; how many went.
    func removeFiles(in folder: String, where remove: @escaping @Sendable (String) -> Bool) async -> Int {
        await io.run {
            FilePath.names(in: folder).filter(remove).reduce(0) { count, name in count + (unlink(FilePath.join(folder, name)) == 0 ? 1 : 0) }
        }
    }

    private func remove(_ paths: [String]) async {
        await io.run { for path in paths { unlink(path) } }
    }

    private func receive(_ upload: ClipUpload, limits: UploadLimits, takenIDs: Set<String>) async throws(JukeboxError) -> String {
        let received: String
        do {
            received = try await upload.complete()
        } catch {
            await upload.discard()
            throw error
        }
        var playable = received
        var name = ClipUpload.safeName(upload.name)
        if let refusal = await decodeCompletely(received, as: name, limits: limits) {
            if refusal.final { throw .unplayable(name, reason: refusal.reason) }
            let refusal = refusal.reason
            guard let converter else {
                throw .unplayable(name, reason: "\(refusal); if it is a recording in another format, install ffmpeg on jukeboxd's machine (sudo apt-get install ffmpeg) so jukeboxd converts it, or convert it to WAV or FLAC yourself")
            }
            let converted = received + ".flac"
            logger.info("converting the upload \(name) with ffmpeg", metadata: ["file": "\(name)"])
            do {
                try await converter.convertToFLAC(received, converted, limits: limits)
            } catch {
                // ffmpeg names its input by the hidden file the upload is kept in until it is
                // accepted; the user knows it by the name it was sent with.
                let said = "\(error)".replacing(converted, with: "\(name).flac").replacing(received, with: name)
                throw .unplayable(name, reason: "\(refusal), and converting it with ffmpeg failed: \(said)")
            }
            // What ffmpeg wrote is bounded too, since a small file of compressed audio can hold
            // hours: in length (it stopped a second past the limit), then in bytes.
            if let still = await decodeCompletely(converted, as: name, limits: limits) {
                throw .unplayable(name, reason: still.final ? "converted with ffmpeg, \(still.reason)" : "converted with ffmpeg, it still cannot be played: \(still.reason)")
            }
            if let size = await io.run({ FilePath.size(converted) }), size >= limits.size {
                throw .uploadRefused("\(name), converted to FLAC, is larger than the \(limits.size) bytes accepted (the session's maxUploadSize); nothing was kept")
            }
            playable = converted
            name = FilePath.removingExtension(name) + ".flac"
        }
        return try await store(playable, as: name, in: upload.clipsDirectory, takenIDs: takenIDs)
    }

    /// Reads every frame of the file, within `limits`; nil when it plays, else why not
    /// (`final` when converting it cannot help: it is too long, too many channels…).
    private func decodeCompletely(_ path: String, as name: String, limits: UploadLimits) async -> (reason: String, final: Bool)? {
        do {
            let clip = try await decoder.open(ClipSource(file: name, path: path))
            do {
                if let refusal = limits.refusal(of: clip.format, frames: clip.frameCount, name: name) {
                    await clip.close()
                    return (refusal, true)
                }
                guard clip.frameCount > 0 else {
                    await clip.close()
                    return ("\(name) holds no audio", false)
                }
                // However the header reads, no more is decoded than the limits allow: the work
                // is bounded by them, not by what the file claims.
                var frames = 0
                while let block = try await clip.read(maxFrames: 1 << 16) {
                    frames += block.frames
                    if let refusal = limits.refusal(of: clip.format, frames: frames, name: name) {
                        await clip.close()
                        return (refusal, true)
                    }
                }
                await clip.close()
            } catch {
                await clip.close()
                throw error
            }
            return nil
        } catch {
            let head = await io.run { FilePath.head(path, count: 16) }
            let why = (error as? ClipDecodeError)?.reason ?? "\(error)"
            guard let kind = AudioFileKind.describe(head) else { return ("\(name): \(why)", false) }
            return ("\(name) is \(kind), which libsndfile cannot read (\(why))", false)
        }
    }

    /// Gives `path` a name in `folder` that no file has and whose clip id (its name without
    /// the extension) is none of `takenIDs`: `name`, else `name-2`, `name-3`… (`rec.ogg`
    /// after `rec.webm` became `rec.flac` is `rec-2.ogg`). An existing file is never
    /// overwritten (the name is taken with `link`, which fails if it exists). Returns the name.
    private func store(_ path: String, as name: String, in folder: String, takenIDs: Set<String>) async throws(JukeboxError) -> String {
        let stem = FilePath.removingExtension(name), ext = String(name.dropFirst(stem.count))
        let result: Result<String, JukeboxError> = await io.run {
            for attempt in 1...1000 {
                let candidate = attempt == 1 ? name : "\(stem)-\(attempt)\(ext)"
                if takenIDs.contains(SessionReader.defaultID(file: candidate)) { continue }
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
