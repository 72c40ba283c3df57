import Logging
import ServiceLifecycle

// The commands every front end calls, and the one snapshot they read from.
extension Jukebox {
    /// Queues clips by id, or by the name of a file inside the clips folder, all or none.
    /// A file that is not in the session is opened first, so one that is not audio is
    /// refused now rather than failing later.
    ///
    /// `afterQuiet`: while it is quiet (quiet hours, or by hand), the clips are held, durably,
    /// and queued when quiet ends; their position is then nil. When it is not quiet they are
    /// queued at once, as without it.
    ///
    /// `now`: the clips are urgent. They go before everything waiting that is not urgent, and
    /// cut the clip playing now, which goes on after them as the session's `afterCut` says.
    ///
    /// `playing`: a level of their own (held to the session's `maxVolume`) and a length to
    /// stop each at.
    public func enqueue(
        _ names: [String], cue: Bool, client: Requester, afterQuiet: Bool = false, now: Bool = false, playing: QueueEntry.Playing = .asIs
    ) async throws(JukeboxError) -> Acknowledged<[(entry: QueueEntry, position: Int?)]> {
        try Self.checkClient(client.name)
        var playing = playing
        if let volume = playing.volume { playing.volume = min(volume, catalog.session.maxVolume) }
        try Self.checkUrgency(now: now, afterQuiet: afterQuiet)
        let resolver = ClipResolver(catalog: catalog)
        var clips: [PlayableClip] = []
        for name in names {
            let clip = try resolver.resolve(name)
            if catalog.session.clip(id: clip.id)?.source.path != clip.source.path {
                do {
                    _ = try await decoder.probe(clip.source)
                } catch {
                    throw .unplayable(name, reason: "\(error)")
                }
            }
            clips.append(clip)
        }
        let cueClip = cue ? sessionCue : nil
        return await acknowledge(try await admit(clips, cue: cueClip, client: client, afterQuiet: afterQuiet, now: now, playing: playing), .enqueue)
    }

    /// A request cannot both cut in now and wait for quiet to end.
    static func checkUrgency(now: Bool, afterQuiet: Bool) throws(JukeboxError) {
        if now, afterQuiet {
            throw .invalidParameter("\"now\" and \"afterQuiet\" cannot both be set: one plays at once, cutting in; the other waits until quiet ends")
        }
    }

    /// Queues clips, or holds them until quiet ends (see `enqueue`).
    func admit(
        _ clips: [PlayableClip], cue: PlayableClip?, client: Requester, afterQuiet: Bool, now: Bool = false, playing: QueueEntry.Playing = .asIs
    ) async throws(JukeboxError) -> [(entry: QueueEntry, position: Int?)] {
        do {
            guard afterQuiet, await quiet.isQuietNow() else {
                return try await queue.enqueue(contentsOf: clips, cue: cue, origin: .client(client), urgent: now, playing: playing).map { ($0.entry, $0.position) }
            }
            let held = try await queue.hold(contentsOf: clips, cue: cue, origin: .client(client), playing: playing)
            logger.info("held \(clips.map(\.id).joined(separator: ", ")) for \(client.name) until quiet ends", metadata: ["client": "\(client.name)"])
            // Quiet may have ended while they were being held, after its end released the rest.
            await quiet.settleNow()
            return held.map { ($0, nil) }
        } catch {
            throw .queueFull(error)
        }
    }

    /// Queues the session's clip with this title (the names Home Assistant's select shows),
    /// or, when no clip has it, this id. Refused with suggestions when neither is found.
    public func enqueue(
        titled title: String, cue: Bool = false, client: Requester, afterQuiet: Bool = false, now: Bool = false, playing: QueueEntry.Playing = .asIs
    ) async throws(JukeboxError) -> Acknowledged<[(entry: QueueEntry, position: Int?)]> {
        let clips = catalog.session.clips
        guard let clip = clips.first(where: { $0.title == title }) ?? clips.first(where: { $0.id == title }) else {
            let shown = String(title.prefix(100))
            throw .unknownClip(shown, suggestions: ClipResolver(catalog: catalog).suggestions(for: shown))
        }
        return try await enqueue([clip.id], cue: cue, client: client, afterQuiet: afterQuiet, now: now, playing: playing)
    }

    /// Queues an announcement: `text` spoken by the session's speech engine (`tts`), FIFO
    /// like any clip. Its audio is started at once in the background; if it cannot be made,
    /// the entry fails at its turn with the reason, and the queue goes on. `now`: it cuts in,
    /// as `enqueue` describes.
    public func say(_ text: String, cue: Bool, client: Requester, afterQuiet: Bool = false, now: Bool = false) async throws(JukeboxError) -> Acknowledged<(entry: QueueEntry, position: Int?)> {
        try Self.checkClient(client.name)
        try Self.checkUrgency(now: now, afterQuiet: afterQuiet)
        let spoken: String
        switch SpeechText.check(text) {
        case .success(let checked): spoken = checked
        case .failure(let problem): throw .invalidParameter(problem.description)
        }
        guard let speech else {
            throw .invalidParameter("announcements are off: this jukeboxd keeps no state, so it has nowhere to keep their audio")
        }
        let cueClip = cue ? sessionCue : nil
        // Its audio is started before it is queued, so an urgent one is ready the sooner.
        await speech.prepare(spoken)
        let accepted = try await admit([.spoken(spoken)], cue: cueClip, client: client, afterQuiet: afterQuiet, now: now)[0]
        return await acknowledge(accepted, .say)
    }

    /// The name a client gives itself: copied into every entry and the state file, so bounded.
    static func checkClient(_ client: String) throws(JukeboxError) {
        guard (1...maxClientLength).contains(client.count) else {
            throw .invalidParameter("\"client\" must be a name of 1 to \(maxClientLength) characters")
        }
    }

    /// The session's cue as it plays before an entry, if the session has one.
    var sessionCue: PlayableClip? { catalog.session.cue.map { PlayableClip(id: "cue", source: $0, title: "cue") } }

    /// Removes waiting entries; returns those removed and those not waiting (playing,
    /// played or unknown).
    public func remove(_ tickets: [UInt64]) async -> Acknowledged<(removed: [UInt64], notWaiting: [UInt64])> {
        var removed: [UInt64] = [], notWaiting: [UInt64] = []
        for ticket in tickets {
            if await queue.remove(ticket: ticket) { removed.append(ticket) } else { notWaiting.append(ticket) }
        }
        return await acknowledge((removed, notWaiting), .remove)
    }

    public func clear() async -> Acknowledged<[UInt64]> { await acknowledge(await queue.clear(), .clear) }

    public func skip() async -> Acknowledged<QueueEntry?> { await acknowledge(await queue.skip(), .skip) }

    /// Ends everything `client` asked for (everything, when nil): the clip playing now if it
    /// queued it, and what it has waiting (`jukebox stop`, Home Assistant's `siren.turn_off`).
    public func stop(queuedBy client: String?) async throws(JukeboxError) -> Acknowledged<(removed: [UInt64], skipped: QueueEntry?)> {
        if let client { try Self.checkClient(client) }
        return await acknowledge(await queue.stop(queuedBy: client), .stop)
    }

    /// Pauses playback; the players the session ducks come back up while nothing sounds.
    public func pause() async -> Acknowledged<Bool> {
        await queue.pause()
        // A pause does not hold an alert back, nor bring the music up under it.
        if await queue.alert == nil {
            await ducker.paused()
            await bedDucker.paused()
        }
        return await acknowledge(true, .pause)
    }

    /// Resumes playback; a clip that goes on mid-way ducks the players again.
    public func resume() async -> Acknowledged<Bool> {
        await queue.resume()
        if let entry = await queue.current {
            await ducker.resumed(entry)
            await bedDucker.resumed(entry)
        }
        return await acknowledge(false, .resume)
    }

    /// The highest level any front end may set: the session's `maxVolume`, on the 0–100 scale.
    var maxVolumeLevel: Int { Int((catalog.session.maxVolume * Double(Self.volumeRange.upperBound)).rounded(.down)) }

    /// Turns quiet on or off by hand, or on for a while (`QuietHours.forRange`); returns the
    /// status it leaves.
    public func setQuiet(_ request: QuietHours.Request) async throws(JukeboxError) -> Acknowledged<QuietHours.Status> {
        if case .for(let length) = request, !QuietHours.forRange.contains(length) {
            throw .invalidParameter("quiet lasts from \(DurationText.format(QuietHours.forRange.lowerBound)) to \(DurationText.format(QuietHours.forRange.upperBound)), not \(DurationText.format(length))")
        }
        return await acknowledge(await quiet.set(request), .setQuiet)
    }

    /// Draws a clip now, as the scheduler would; nil when none may play now.
    public func pick() async -> Acknowledged<QueueEntry?> { await acknowledge(await scheduler.pick(), .pick) }

    /// Sets the volume, 0–100, held to the session's `maxVolume`; returns the level set.
    public func setVolume(_ requested: Int) async throws(JukeboxError) -> Acknowledged<Int> {
        guard Self.volumeRange.contains(requested) else {
            throw .invalidParameter("the volume must be from \(Self.volumeRange.lowerBound) to \(Self.volumeRange.upperBound), not \(requested)")
        }
        let level = min(requested, maxVolumeLevel)
        if level < requested {
            logger.info("volume \(requested) asked for; set to \(level), the session's maxVolume")
        }
        // Set by hand, it holds until the volume schedule's next step.
        await volume.setByHand(Double(level) / Double(Self.volumeRange.upperBound))
        return await acknowledge(level, .setVolume)
    }

    /// Turns the music bed's music on or off; returns the bed as it is then. Refused when the
    /// session has no bed.
    public func setMusic(on: Bool) async throws(JukeboxError) -> Acknowledged<MusicBedState> {
        guard await player.hasBed else { throw Self.noBed }
        await player.setMusicOn(on)
        guard let state = await player.snapshot().bed else { throw Self.noBed }
        return await acknowledge(state, .setMusic)
    }

    public static let noBed = JukeboxError.invalidParameter(
        "the session has no music bed: add a \"bed\" section naming the pipe the music comes in through (see docs/music.md)")

    /// Everything there is to show, read part by part in one call: each part (the queue, the
    /// player, the scheduler, quiet hours, the ducker) is read whole at its own moment, a
    /// few awaits apart. The queue's part is one moment, so what plays, what waits and the
    /// history always agree; the player's position may be a block further on than the
    /// queue's view of the clip, and a change between two reads shows in the next snapshot,
    /// with its event.
    public func snapshot() async -> JukeboxSnapshot {
        let queueNow = await queue.snapshot()
        let playerNow = await player.snapshot()
        let nextPick = queueNow.pickBlock == nil ? await scheduler.nextPickWallTime : nil
        var now = JukeboxSnapshot(
            catalog: catalog, queue: queueNow, player: playerNow, nextPick: nextPick, quiet: await quiet.statusNow(),
            uptime: configuration.time.wallClock() - startedAt, localTime: configuration.time.localNow(), ducked: await ducker.ducked, ducking: await ducker.isDucking)
        if hasPlans, let days = try? await planDays(from: nil, count: 2), days.count == 2 { (now.todayPlan, now.tomorrowPlan) = (days[0], days[1]) }
        now.calendars = await calendars.states
        return now
    }
}
