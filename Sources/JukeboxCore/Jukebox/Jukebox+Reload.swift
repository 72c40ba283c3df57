import Logging
import ServiceLifecycle

// A session read again or edited, taken up by every part at once; one reload or edit at a time.
extension Jukebox {
    /// Reads the session file again. Every waiting entry keeps its place, even one whose
    /// clip the new file no longer lists: it carries its file and plays (or fails with a
    /// reason in the history), never dropped unseen. The bag keeps its cycle and the counts
    /// stay. A new output is used from the next clip, a new volume at once, and a new
    /// duration counts from start-up.
    public func reload() async throws(JukeboxError) -> Acknowledged<(session: String, clips: Int)> {
        await lockSession()
        defer { unlockSession() }
        let session: Session
        do {
            session = try await loadSession()
        } catch {
            throw .sessionInvalid(problems: error.problems)
        }
        try await checkNewDevice(session)
        let fresh = await adopt(session)
        await calendars.readAllSoon()
        logger.notice("session reloaded from \(session.sourcePath): \(Plural.count(fresh.playableClips.count, "playable clip"))")
        return await acknowledge((session.name, fresh.playableClips.count), .reload)
    }

    /// A reload that names another ALSA device opens it for a moment first. One that is not
    /// there is refused, with the name meant and the names there are, and the running session
    /// plays on; one that is busy or refuses is told in the log, and taken (it may be freed).
    /// The device in use is not opened again: it is ours.
    func checkNewDevice(_ session: Session) async throws(JukeboxError) {
        guard session.output != catalog.session.output, case .alsa = session.output, let checkDevice = configuration.checkDevice else { return }
        let found = await checkDevice(session.deviceName)
        guard let message = found.message else { return }
        if found.problem?.code == .notFound {
            throw .sessionInvalid(problems: ["\(SessionLoader.deviceField(in: session.sourcePath)): \(message)"])
        }
        logger.warning("the reloaded session's \(message)")
    }

    /// Puts a session just read or edited in place of the running one: its clips are probed,
    /// a new output is used from the next clip, a new volume at once; the queue, the bag's
    /// cycle and the counts stay.
    /// `reprobe: false` (an edit) opens only files the running session did not have.
    @discardableResult
    func adopt(_ session: Session, reprobe: Bool = true) async -> ClipCatalog {
        let fresh = await ClipCatalog.probing(session, with: decoder, logger: logger, known: reprobe ? nil : catalog)
        let old = catalog.session
        catalog = fresh
        await player.configure(session.playback)
        if session.hooks != old.hooks { await hooks.configure(session.hooks) }
        if session.speech != old.speech { await speech?.configure(session.speech) }
        if session.output != old.output || session.bed != old.bed {
            await player.useOutput(makeOutput(session.output, session.bed))
        }
        // Quiet hours, the volume, the scheduler and the timetable take it up before this returns.
        await schedule.replace(with: Schedule(session, playable: fresh.playableClips))
        await queue.configure(grace: session.grace, afterCut: session.afterCut)
        await loudness.adopt(target: session.loudness, sources: Self.loudnessSources(fresh))
        // The front ends listen from start-up: a change to theirs waits for a restart.
        for (section, changed) in [("http", session.web != old.web), ("mqtt", session.mqtt != old.mqtt)] where changed {
            logger.notice("the session's \(section) section changed; it is read at start-up, so restart jukeboxd (systemctl restart jukeboxd) to use it")
        }
        events.publish(.sessionReloaded(name: session.name, clips: fresh.playableClips.count))
        return fresh
    }

    /// The session as the daemon runs it.
    var session: Session { catalog.session }

    /// The files whose loudness counts: every playable clip's, and the cue's.
    static func loudnessSources(_ catalog: ClipCatalog) -> [ClipSource] {
        catalog.playableClips.map(\.source) + (catalog.session.cue.map { [$0] } ?? [])
    }

    /// Every clip's loudness and the gain that brings it to the session's target.
    public func loudnessReport() async -> (target: Double?, clips: [(clip: Clip, loudness: Loudness?, gain: Double?)]) {
        let clips = session.clips
        let (target, figures) = await loudness.report(clips.map(\.source))
        return (target, zip(clips, figures).map { clip, figure in (clip, figure, figure.flatMap { figure in target.map { figure.gain(toward: $0) } }) })
    }


    /// Waits until no other reload or edit is under way, then holds the session until
    /// `unlockSession()`: each reads the file, and an edit writes it, so two at once could
    /// lose one.
    func lockSession() async {
        if sessionBusy {
            await withCheckedContinuation { sessionWaiters.append($0) }
        } else {
            sessionBusy = true
        }
    }

    func unlockSession() {
        if sessionWaiters.isEmpty { sessionBusy = false } else { sessionWaiters.removeFirst().resume() }
    }
}
