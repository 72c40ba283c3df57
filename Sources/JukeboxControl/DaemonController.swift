import JukeboxCore
import JukeboxProtocol

/// The control methods, carried out on the running queue and scheduler.
public actor DaemonController<C: Clock>: JukeboxControlling where C.Duration == Duration {
    public typealias Reloader = @Sendable () async throws(SessionLoadError) -> ClipCatalog

    public nonisolated let events: EventBus
    private let queue: ClipPlayQueue
    private let jukebox: ClipJukebox<C>
    private let reloader: Reloader
    /// nil: nothing is saved (tests, or no state file).
    private let writer: StateWriter?
    private let wallClock: WallClock
    private let localTime: any LocalTimeSource
    private let startedAt: Double
    private var catalog: ClipCatalog

    public init(
        catalog: ClipCatalog, queue: ClipPlayQueue, jukebox: ClipJukebox<C>, reloader: @escaping Reloader,
        writer: StateWriter? = nil, localTime: any LocalTimeSource = SystemLocalTime(),
        wallClock: @escaping WallClock = SystemWallClock.now
    ) {
        self.writer = writer
        self.catalog = catalog
        self.queue = queue
        self.jukebox = jukebox
        self.reloader = reloader
        self.events = queue.events
        self.localTime = localTime
        self.wallClock = wallClock
        self.startedAt = wallClock()
    }

    public func enqueue(_ names: [String], withCue: Bool, origin: String) async throws(RPCError) -> EnqueueResult {
        // Resolve every name before queueing any, so a typo in the third name queues nothing.
        var clips: [PlayableClip] = []
        for name in names { clips.append(try ClipResolver(catalog: catalog).resolve(name)) }
        let cue = withCue ? catalog.session.cue.map { PlayableClip(id: "cue", source: $0, title: "cue") } : nil
        do {
            let accepted = try await queue.enqueue(contentsOf: clips, cue: cue, origin: .client(origin))
            return EnqueueResult(entries: accepted.map { EntryInfo($0.entry, position: $0.position) })
        } catch {
            throw .queueFull("\(error)")
        }
    }

    public func markChange() async -> UInt64 { await writer?.markChange() ?? 0 }

    public func commit(through mark: UInt64) async throws(RPCError) {
        guard let writer else { return }
        do {
            try await writer.save(through: mark)
        } catch {
            throw .stateNotSaved("\(error)")
        }
    }

    public func queue() async -> QueueResult {
        let waiting = await queue.waiting.enumerated().map { EntryInfo($1, position: $0 + 1) }
        return QueueResult(playing: await playing(), waiting: waiting)
    }

    private func playing() async -> PlayingInfo? {
        guard let current = await queue.current else { return nil }
        let position = await queue.player.position
        return PlayingInfo(
            entry: EntryInfo(current), elapsed: position?.elapsed.secondsDouble, total: position?.total.secondsDouble,
            startedAt: await queue.currentStartedAt, paused: await queue.player.isPaused)
    }

    public func status() async -> StatusResult {
        let player = queue.player
        // Retrying says why; otherwise the player knows whether the device is open right now
        // (it closes it when idle).
        let state = await queue.deviceState
        let deviceState = state.isRetrying ? state.description : (await player.isDeviceOpen ? "ok" : "closed")
        return StatusResult(
            session: catalog.session.name, device: player.deviceName, deviceState: deviceState,
            playing: await queue.current.map { EntryInfo($0) }, queueLength: await queue.waiting.count,
            paused: await player.isPaused, volume: Int((await player.volume * 100).rounded()),
            nextPick: await jukebox.nextPickWallTime, uptime: wallClock() - startedAt,
            played: await queue.playedCount, failed: await queue.failedCount, underruns: await player.underruns())
    }

    public func skip() async -> SkipResult { SkipResult(skipped: await queue.skip().map { EntryInfo($0) }) }

    public func remove(_ tickets: [UInt64]) async throws(RPCError) -> RemoveResult {
        var result = RemoveResult(removed: [], notWaiting: [])
        for ticket in tickets {
            if await queue.remove(ticket: ticket) { result.removed.append(ticket) } else { result.notWaiting.append(ticket) }
        }
        return result
    }

    public func clear() async throws(RPCError) -> RemoveResult {
        let removed = await queue.clear()
        return RemoveResult(removed: removed, notWaiting: [])
    }

    public func pause() async throws(RPCError) -> PauseResult {
        await queue.pause()
        return PauseResult(paused: true)
    }

    public func resume() async throws(RPCError) -> PauseResult {
        await queue.resume()
        return PauseResult(paused: false)
    }

    public func pick() async throws(RPCError) -> PickResult {
        let entry = await jukebox.pick()
        return PickResult(entry: entry.map { EntryInfo($0) })
    }

    public func clips() async -> ClipsResult {
        let now = localTime.now()
        let stats = await queue.stats
        return ClipsResult(clips: catalog.session.clips.map { clip in
            ClipInfo(
                id: clip.id, title: clip.title, file: clip.source.file, duration: catalog.durations[clip.id]?.secondsDouble,
                enabled: clip.enabled, windowOpen: clip.windows.allow(now) && catalog.session.activeHours.allow(now),
                timesPlayed: stats[clip.id]?.timesPlayed ?? 0, lastPlayed: stats[clip.id]?.lastPlayed,
                problem: catalog.problems[clip.id])
        })
    }

    public func history(limit: Int) async -> HistoryResult {
        let records = await queue.history.suffix(max(limit, 0))
        return HistoryResult(plays: records.reversed().map { record in
            PlayInfo(entry: EntryInfo(record.entry), startedAt: record.startedAt, outcome: record.outcome.name, reason: record.outcome.reason)
        })
    }

    public func volume(_ level: Int?) async throws(RPCError) -> VolumeResult {
        if let level {
            await queue.player.setVolume(Double(level) / 100)
        }
        return VolumeResult(volume: Int((await queue.player.volume * 100).rounded()))
    }

    public func reload() async throws(RPCError) -> ReloadResult {
        let fresh: ClipCatalog
        do {
            fresh = try await reloader()
        } catch {
            throw .sessionInvalid(error.problems)
        }
        // Waiting entries all keep their place, even those of clips the new file no longer
        // lists: each entry carries its clip's file, and a clip that was accepted is played
        // (or fails with a reason in the history), never dropped unseen. The new session only
        // changes what is scheduled and what clients may queue from now on.
        catalog = fresh
        await jukebox.reload(fresh.session, clips: fresh.playableClips)
        let result = ReloadResult(session: fresh.session.name, clips: fresh.playableClips.count)
        events.publish(.sessionReloaded(name: result.session, clips: result.clips))
        return result
    }
}
