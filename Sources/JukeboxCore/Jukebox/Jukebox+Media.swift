#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Media by address (Home Assistant's `play_media`, its announcements): fetched into the
/// clips folder's `.media`, checked as an upload is (decoded whole, converted by ffmpeg if
/// need be, within the session's limits), and queued as an entry of its own. The file stays
/// until nothing in the queue needs it: it is removed at the next fetch or start after that.
extension Jukebox {
    /// The id every fetched media entry has in the queue and the history.
    public static let mediaID = "media"
    /// The folder, in the clips folder, where fetched media is kept.
    public static let mediaFolderName = ".media"

    /// Fetches `address` and queues it for `client`; `before`, another address, plays first as
    /// the entry's cue (an announcement's chime). `now`: it cuts in, as `play --now` does. The
    /// answer comes once it is queued and saved; a fetch or a file that fails keeps nothing.
    public func playAddress(
        _ address: String, before: String? = nil, title: String? = nil, client: Requester, now: Bool = false
    ) async throws(JukeboxError) -> Acknowledged<(entry: QueueEntry, position: Int?)> {
        try Self.checkClient(client.name)
        for given in [address] + (before.map { [$0] } ?? []) {
            if let problem = MediaLimits.problem(given) { throw .invalidParameter(problem) }
        }
        if let title, !(1...PlayableClip.speechTitleLength).contains(title.count) {
            throw .invalidParameter("\"title\" must be 1 to \(PlayableClip.speechTitleLength) characters")
        }
        guard let fetcher = configuration.mediaFetcher else {
            throw .invalidParameter("this jukeboxd does not fetch media by address")
        }
        let waiting = await mediaEntries().count
        guard waiting + mediaFetches < MediaLimits.maxWaiting else {
            throw .uploadRefused("\(MediaLimits.maxWaiting) fetched media are waiting to play already; try again once one has played")
        }
        mediaFetches += 1
        defer { mediaFetches -= 1 }
        await pruneMedia()
        var cue: PlayableClip?
        if let before { cue = try await fetchMedia(before, with: fetcher, title: nil) }
        let clip: PlayableClip
        do {
            clip = try await fetchMedia(address, with: fetcher, title: title)
        } catch {
            if let cue { await editor.discard(stored: cue.source.file, in: mediaFolder) }
            throw error
        }
        do {
            let accepted = try await admit([clip], cue: cue, client: client, afterQuiet: false, now: now)[0]
            logger.info("queued the media at \(MediaLimits.shown(address)) for \(client.name)\(now ? ", now" : "")", metadata: ["client": "\(client.name)"])
            return await acknowledge(accepted, .enqueue)
        } catch {
            for stored in [clip] + (cue.map { [$0] } ?? []) { await editor.discard(stored: stored.source.file, in: mediaFolder) }
            throw error
        }
    }

    var mediaFolder: String { FilePath.join(catalog.session.clipsDirectory, Self.mediaFolderName) }

    /// The media entries queued, held or playing.
    private func mediaEntries() async -> [QueueEntry] {
        let queued = await queue.snapshot()
        return (Array(queued.waiting) + Array(queued.held) + (queued.current.map { [$0] } ?? [])).filter { $0.clip.id == Self.mediaID }
    }

    private func fetchMedia(_ address: String, with fetcher: any MediaFetcher, title: String?) async throws(JukeboxError) -> PlayableClip {
        let session = catalog.session
        let folder = mediaFolder
        var media = session
        media.clipsDirectory = folder
        media.maxUploadSize = min(session.maxUploadSize, MediaLimits.maxBytes)
        if let problem = await editor.makeFolder(folder) {
            throw .uploadRefused("cannot keep fetched media in \(folder): \(problem)")
        }
        let name = Self.mediaName(address)
        let upload = try editor.beginUpload(name: name, in: media)
        do {
            try await fetcher.fetch(address) { bytes in try await upload.write(bytes) }
        } catch {
            // Its refusal below says what was not kept, in a fetch's words.
            await upload.discard(logged: false)
            if let error = error as? JukeboxError { throw error }
            throw .uploadRefused("the media at \(MediaLimits.shown(address)) could not be fetched: \(error); nothing was kept")
        }
        let stored = try await editor.store(upload, limits: UploadLimits(length: session.maxUploadLength, size: media.maxUploadSize))
        return PlayableClip(
            id: Self.mediaID, source: ClipSource(file: stored, path: FilePath.join(folder, stored), within: session.clipsDirectory),
            title: title ?? "media: \(stored)")
    }

    /// A file name for what `address` holds: its last path part, made safe (`media` when it
    /// has none).
    static func mediaName(_ address: String) -> String {
        let path = address.prefix { $0 != "?" && $0 != "#" }
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        let name = path.split(separator: "/").count > 2 ? last : ""
        return ClipUpload.safeName(name.isEmpty ? "media" : name)
    }

    /// Removes the fetched files that no entry needs any more (played, skipped, removed),
    /// and what an earlier run's fetch left unfinished.
    func pruneMedia() async {
        let folder = mediaFolder
        let needed = Set(await mediaEntries().flatMap { [$0.clip.source.file] + ($0.cue.map { [$0.source.file] } ?? []) })
        let removed = await editor.removeFiles(in: folder) { name in !needed.contains(name) && !name.hasPrefix(ClipUpload.temporaryPrefix) }
        if removed > 0 { logger.debug("removed \(Plural.count(removed, "fetched media file")) that nothing waits to play") }
    }
}
