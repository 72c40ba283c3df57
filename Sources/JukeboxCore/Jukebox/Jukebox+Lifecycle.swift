import Logging
import ServiceLifecycle

// Starting and stopping: the saved state put back, the services run, the state saved as it changes.
extension Jukebox {
    /// Puts back the saved queue, bag, volume and pause, and logs what happened. Call once,
    /// before `run()`.
    public func restoreState() async {
        // The calendars' last good copies first: the plan times that passed while stopped
        // are worked out with them.
        await calendars.start()
        guard let stateFile, let writer else { return }
        await queue.setRiskyStartHook { [weak self] in await self?.saveNowOrLog() }
        await volume.setChangeHook { [weak self] in await self?.saveNowOrLog() }
        switch await stateFile.load(now: configuration.time.wallClock()) {
        case .missing:
            logger.info("no saved state at \(stateFile.path); starting with an empty queue")
        case .corrupt(let movedTo, let reason):
            logger.warning("state file \(stateFile.path) could not be used (\(reason)); kept it as \(movedTo) and started with an empty queue")
        case .unusable(let reason):
            // Saving now would overwrite a file that may still hold someone's queue.
            logger.error("state file \(stateFile.path) could not be used, and was not moved aside: \(reason); started with an empty queue and will not save until it is moved away or the folder is fixed, then restarted")
            await writer.refuseSaves(reason: "\(stateFile.path) could not be read or moved aside (\(reason))")
        case .loaded(let saved):
            let session = catalog.session
            let (state, refused) = saved.confined(to: session, now: configuration.time.wallClock())
            for entry in refused {
                let what = entry.clip.say != nil
                    ? "is an announcement whose text is not valid"
                    : "names \(entry.clip.path), outside the clips folder \(session.clipsDirectory)"
                logger.warning("state file \(stateFile.path): ticket \(entry.ticket) \(what); not queued", metadata: ["ticket": "\(entry.ticket)"])
            }
            // A clip queued at its fixed time that did not start before the daemon stopped is
            // not played later than it may be (`atGrace`, or `playLateWithin`): it is missed.
            let now = configuration.time.wallClock(), grace = session.grace
            var waiting: [PersistedState.Entry] = [], held: [PersistedState.Entry] = [], late: [PersistedState.Entry] = []
            for entry in state.waiting {
                if entry.afterQuiet == true {
                    held.append(entry)
                    continue
                }
                guard let due = entry.at, grace.isMissed(due: Double(due), now: now) else {
                    waiting.append(entry)
                    continue
                }
                late.append(entry)
            }
            await queue.restore(
                entries: waiting.map(\.queueEntry), held: held.map(\.queueEntry), nextTicket: state.nextTicket, stats: state.stats,
                history: state.history.map(\.record), started: state.started, paused: state.paused)
            for entry in late {
                let reason = "it was queued at its time, but jukeboxd stopped before it played, longer ago than \(session.grace.words); not played late"
                await queue.recordNotPlayed(entry.queueEntry, outcome: .missed(reason: reason))
            }
            // An alert that was on sounds again, first; the times that passed meanwhile were
            // held back by it.
            if let alert = state.alert { await restoreAlert(alert) }
            if let bag = state.bag { await scheduler.restoreBag(bag) }
            await quiet.restore(state.quiet)
            if let plans = state.plans { await timetable.restorePlans(plans) }
            if let until = state.timetableUntil { await timetable.restore(handledUntil: until) }
            await volume.start(saved: (state.volume, state.volumeStepAt))
            volumeStarted = true
            // Players a daemon that died left lowered are put back first.
            await ducker.restore(saved: state.ducked ?? [])
            if state.musicOff == true { await player.setMusicOn(false) }
            // Announcements whose audio is not kept any more are made again, ahead of their turn.
            for entry in waiting { if let text = entry.clip.say { await speech?.prepare(text) } }
            let heldNote = held.isEmpty ? "" : " and \(Plural.count(held.count, "request")) held until quiet ends"
            logger.info("restored \(Plural.count(waiting.count, "queued clip"))\(heldNote)\(state.paused ? ", paused" : "") from \(stateFile.path)")
        }
    }

    public func run() async throws {
        // Fetched media that nothing restored waits for.
        await pruneMedia()
        // The output is taken up: a music bed plays from now on.
        await player.start()
        await timetable.setPlansChanged { [events] in events.publish(.plans(byHand: false)) }
        await calendars.start()
        await queue.configure(grace: catalog.session.grace, afterCut: catalog.session.afterCut)
        await loudness.adopt(target: session.loudness, sources: Self.loudnessSources(catalog))
        if !volumeStarted {
            // Nothing saved: the volume schedule's step in force, if there is one.
            await volume.start(saved: nil)
            volumeStarted = true
        }
        let (queue, scheduler, timetable, quiet, volume) = (queue, scheduler, timetable, quiet, volume)
        if writer != nil { await ducker.setSaver { [weak self] in try await self?.saveNow() } }
        await ducker.setNextStart { [weak self] in await self?.plan(limit: 1).nextPlay }
        await bedDucker.setNextStart { [weak self] in await self?.plan(limit: 1).nextPlay }
        await withTaskGroup(of: Bool.self) { tasks in
            tasks.addTask { try? await queue.run(); return false }
            tasks.addTask { try? await quiet.run(); return false }
            tasks.addTask { try? await volume.run(); return false }
            tasks.addTask { try? await scheduler.run(); return true }
            tasks.addTask { try? await timetable.run(); return false }
            tasks.addTask { [calendars] in try? await calendars.run(); return false }
            if let speech { tasks.addTask { await speech.run(); return false } }
            // The idle hook, once the device has been released after playing.
            let deviceChanges = events.watch()
            tasks.addTask { [hooks] in
                await cancelWhenGracefulShutdown {
                    for await event in deviceChanges {
                        if case .device(.closed) = event { await hooks.run(.idle) }
                    }
                }
                return false
            }
            if let writer {
                // Subscribed before the queue or the scheduler can change anything.
                let changes = events.watch()
                tasks.addTask { await self.save(changes, with: writer); return false }
            }
            // The scheduler returns at the session's end, once the last clip has finished,
            // and on shutdown; either way everything stops.
            for await schedulerEnded in tasks where schedulerEnded { break }
            tasks.cancelAll()
        }
        // An upload the stop cut off leaves no file behind (the front ends have stopped).
        let uploads = editor.uploads
        await BlockingWorkQueue(label: "jukeboxd.uploads").run { uploads.removeUnfinished() }
        // The other players go back up before the last save.
        await ducker.shutdown()
        await bedDucker.shutdown()
        // The last word: how the last clip ended, cut short (it stays first and plays again
        // after a restart) or finished as the shutdown began (it counts as played).
        if let writer {
            do { try await writer.save() } catch { logger.error("\(error)") }
        }
    }

    /// Saves what the daemon changes by itself: a scheduled pick, a clip starting or ending.
    /// (Commands are saved before they are acknowledged.)
    func save(_ changes: AsyncStream<JukeboxEvent>, with writer: StateWriter) async {
        await cancelWhenGracefulShutdown {
            for await event in changes {
                switch event {
                case .queued(let entry, _) where !entry.origin.isClient: break
                // Quiet began or ended, or requests held for its end were released. A clip
                // cut by an urgent one while paused: nothing plays after it to save it.
                case .playing, .finished, .quiet, .cut: break
                default: continue
                }
                do { try await writer.save() } catch { self.logger.error("\(error)") }
            }
        }
    }

    /// How long the output's oldest unfinished call has run: a call stuck in a driver is
    /// what the systemd watchdog must see. The output is the one playing now, which is the
    /// old one until a clip that was playing when another was chosen has ended.
    public nonisolated func outputStall() -> Duration? { player.outputStall() }
}
