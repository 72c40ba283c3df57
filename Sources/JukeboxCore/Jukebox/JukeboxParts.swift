import Logging

/// What the jukebox is made of, wired together once at start-up: who plays (the player and
/// its output), who queues (the queue, with the hooks and the speech engine at its slots),
/// who keeps to the schedule (the scheduler, the timetable, quiet hours, the volume, all
/// reading one `ScheduleBoard`), and who saves (the state writer, which releases the events).
/// `Jukebox` serves commands with these parts; it builds none of them itself.
struct JukeboxParts {
    let events: EventBus
    let player: Player
    let queue: ClipPlayQueue
    let schedule: ScheduleBoard
    let scheduler: ClipJukebox
    let timetable: ClipTimetable
    let quiet: QuietHours
    let volume: VolumeControl
    let loudness: ClipLoudness
    let editor: SessionEditor
    let hooks: HookRunner
    let calendars: CalendarFeeds
    /// The duck policy twice: over the session's other players, and over the bed's gain.
    let ducker: Ducker
    let bedDucker: Ducker
    /// nil when there is nowhere to keep announcements' audio.
    let speech: SpeechSynthesizer?
    /// nil: nothing is saved (tests, benchmarks).
    let writer: StateWriter?

    static func wire(
        catalog: ClipCatalog, decoder: any ClipDecoder, converter: (any AudioConverter)?, makeOutput: Jukebox.OutputFactory, stateFile: StateFile?,
        sessionOverrides: @escaping Jukebox.SessionOverrides, configuration: Jukebox.Configuration, logger: Logger
    ) -> JukeboxParts {
        let session = catalog.session
        let time = configuration.time
        let events = EventBus()
        // Saved-state events wait for their write, from the first.
        if stateFile != nil { events.releaseOnlyWhatIsSaved() }
        let loudness = ClipLoudness(
            meter: configuration.loudnessMeter, decoder: decoder, file: stateFile.map { ClipLoudness.file(besideState: $0.path) }, logger: logger)
        let player = Player(
            output: makeOutput(session.output, session.bed), makeRateConverter: configuration.makeRateConverter, decoder: decoder, clock: time.clock,
            volume: session.volume, options: session.playback, events: events, loudness: loudness, logger: logger)
        let hooks = HookRunner(session.hooks, logger: logger)
        let speech = (configuration.speechFolder ?? stateFile.map { SpeechCache.folder(besideState: $0.path) }).map { folder in
            SpeechSynthesizer(
                settings: session.speech, cache: SpeechCache(folder: folder, limits: configuration.speechLimits), decoder: decoder, logger: logger)
        }
        let schedule = ScheduleBoard(session, playable: catalog.playableClips)
        let ducker = Ducker(schedule: schedule, makeTarget: configuration.makeDuckTarget, events: events, time: time, logger: logger)
        let bedDucker = Ducker(schedule: schedule, lowers: .bed, makeTarget: { _ in BedLevelTarget(player: player) }, events: nil, time: time, logger: logger)
        let queue = ClipPlayQueue(
            player: player, events: events, time: time, capacity: configuration.queueLimit, logger: logger,
            beforePlaying: { entry in
                await hooks.run(.beforePlaying, entry: entry)
                // The lead-in plays first when the device opens: the lowering runs under it.
                let leadIn = await player.isDeviceOpen ? .zero : await player.options.leadIn
                // Both lower at once; the clip waits for the longer attack (the bed's only while
                // music comes in: over silence it is lowered all the same, and nothing waits).
                let bedMusicPlays = await player.bedMusicPlays
                // An alert waits for nothing: it is heard at once, over the music going down.
                let waits = entry.alert == nil
                async let others: Void = ducker.clipStarting(entry, leadIn: leadIn, waiting: waits)
                async let bed: Void = bedDucker.clipStarting(entry, leadIn: leadIn, waiting: bedMusicPlays && waits)
                _ = await (others, bed)
            },
            afterPlaying: { entry, outcome, anotherWaits in
                await hooks.run(.afterPlaying, entry: entry, outcome: outcome)
                async let others: Void = ducker.clipEnded(anotherWaits: anotherWaits)
                async let bed: Void = bedDucker.clipEnded(anotherWaits: anotherWaits)
                _ = await (others, bed)
            },
            prepare: { clip in
                guard let speech else { throw SpeechFailure("announcements are off: there is no state folder to keep their audio in") }
                return try await speech.audio(for: clip)
            })
        let quiet = QuietHours(schedule: schedule, queue: queue, events: events, time: time, logger: logger)
        let volume = VolumeControl(schedule: schedule, player: player, events: events, time: time, logger: logger)
        let scheduler = ClipJukebox(
            schedule: schedule, queue: queue, quiet: quiet, events: events, time: time, generator: configuration.generator, logger: logger)
        let timetable = ClipTimetable(schedule: schedule, queue: queue, quiet: quiet, time: time, logger: logger)
        let calendars = CalendarFeeds(
            schedule: schedule, timetable: timetable, time: time, fetcher: configuration.calendarFetcher,
            folder: configuration.calendarFolder ?? stateFile.map { StateFile.sibling(of: $0.path, ".calendars") }, events: events, logger: logger)
        let writer = stateFile.map { file in
            StateWriter(file: file, events: events) { [queue, scheduler, timetable, quiet, volume, player, ducker] in
                await PersistedState.gather(
                    queue: queue, scheduler: scheduler, timetable: timetable, quiet: quiet, volume: volume, player: player, ducker: ducker)
            }
        }
        return JukeboxParts(
            events: events, player: player, queue: queue, schedule: schedule, scheduler: scheduler, timetable: timetable, quiet: quiet,
            volume: volume, loudness: loudness, editor: SessionEditor(
                decoder: decoder, converter: converter, sessionOverrides: sessionOverrides, clock: ElapsedClock(time.clock), logger: logger),
            hooks: hooks, calendars: calendars, ducker: ducker, bedDucker: bedDucker, speech: speech, writer: writer)
    }
}
