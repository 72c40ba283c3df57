import Logging

// The consumer loop: one entry at a time from the head of the order, its cue and its clip
// through the player, a device that fails retried in place, a cut clip put back, and each
// play's end added to the history.
extension ClipPlayQueue {
    func consume() async {
        for await _ in wakeups {
            while true {
                if alert != nil {
                    // While an alert is on, it is all that sounds; what waits stays waiting.
                    guard !closing, !Task.isCancelled else { break }
                    await soundAlert()
                    if Task.isCancelled { return }
                    continue
                }
                guard !waiting.isEmpty else { break }
                // An alert's end clip plays even while paused: it is the alert's last word.
                if waiting.first?.alert == nil { await waitWhilePaused() }
                if alert != nil { continue }
                guard !closing, !Task.isCancelled, let entry = order.next() else { break }
                current = entry
                // A cut asked for while the entry before ended by itself is over.
                pauseSwitch.requestCut(false)
                currentStartedAt = time.wallClock()
                let restored = restoredStart?.ticket == entry.ticket ? restoredStart : nil
                restoredStart = nil
                started = StartMark(ticket: entry.ticket, count: (restored?.count ?? 0) + 1)
                if restored != nil {
                    // The first entry after a restart, perhaps the one that crashed the daemon:
                    // its start is durable before it plays, so a crash loop cannot go uncounted.
                    await onRiskyStart?()
                }
                events.publish(.playing(entry))
                logger.debug("playing \(entry.clip.id) (ticket \(entry.ticket))", metadata: Self.fields(entry))
                let end = await playSlot(entry)
                // However the slot ended, nothing waits for the device any more.
                await endDeviceWait()
                let outcome: PlayOutcome
                switch end {
                case .ended(let ended):
                    outcome = ended
                case .cut where entry.alert != nil:
                    // An alert's end clip, cut by another alert, which has an end of its own.
                    alertSwitch.requestCut(false)
                    outcome = .stopped
                case .cut(let point):
                    guard let dropped = putBack(entry, cutAt: point) else { continue }
                    outcome = dropped
                }
                if Task.isCancelled, outcome == .stopped {
                    // Shutting down cut it: the clip stays at the head of the queue (the saved
                    // state lists it first) and plays again from its start after a restart.
                    // A clean stop is not a crash, so its start is not counted.
                    started = nil
                    logger.info("\(entry.clip.id) will play again from its start after a restart", metadata: Self.fields(entry))
                    return
                }
                // A clip that ended (its tail drained as the shutdown began) counts as played.
                finish(entry, outcome)
                await afterPlaying?(entry, outcome, somethingStartsNext)
                if Task.isCancelled { return }
                if waiting.isEmpty { await player.becameIdle() }
            }
        }
    }

    /// How one slot, or one play in it, ended: with an outcome, or cut by an urgent entry
    /// at a frame of the clip (0: before any of it was heard, or in its cue).
    enum SlotEnd: Equatable {
        case ended(PlayOutcome)
        case cut(at: QueueEntry.ResumePoint)
    }

    /// The entry an urgent one cut, as the session's `afterCut` says: back to wait right
    /// after the urgent entries, to go on from where it was heard to (`resume`) or from its
    /// start (`restart`); or ended (`drop`), which returns its outcome for `finish`.
    func putBack(_ entry: QueueEntry, cutAt point: QueueEntry.ResumePoint) -> PlayOutcome? {
        pauseSwitch.requestCut(false)
        current = nil
        currentStartedAt = nil
        started = nil
        stopWaitingForTheEnd()
        let at = entry.clip.source.file
        if afterCut == .drop {
            logger.info("\(entry.clip.id) (\(at)) was cut by an urgent clip and is dropped (afterCut: drop)", metadata: Self.fields(entry))
            return .stopped
        }
        var back = entry
        back.resumeAt = afterCut == .resume ? point : .start
        let position = order.putBack(back)
        let from = back.resumeAt?.frame ?? 0 > 0 ? DurationText.format(.seconds(back.resumeAt?.seconds ?? 0)) : "its start"
        logger.info("\(entry.clip.id) (\(at)) was cut by an urgent clip; it goes on from \(from) after the urgent clips (afterCut: \(afterCut.rawValue))", metadata: Self.fields(entry))
        events.publish(.cut(back, position: position))
        return nil
    }

    /// Plays one entry. A device problem keeps the entry here, at the head of the queue, and
    /// retries with backoff until the device is back; the clip then starts from the beginning
    /// (or from where a cut left it). That includes a problem while the last clip's tail
    /// drains: it was not all heard.
    func playSlot(_ entry: QueueEntry) async -> SlotEnd {
        // What cuts it: an urgent entry or an alert, or, for an alert's own clips, the
        // alert's end or replacement. Only the first is ever paused.
        let gate = entry.alert == nil ? pauseSwitch : alertSwitch
        var backoff = Backoff()
        /// The device's last problem in this slot: a repeat of it is logged quietly.
        var lastProblem: AudioDeviceError?
        skipRequested = false
        var entry = entry
        if entry.clip.speech != nil, let prepare {
            // Before the hooks and the cue: an amplifier is not switched on, nor a cue heard,
            // for an announcement that cannot be made.
            let clip = entry.clip
            let task = Task { try await prepare(clip) }
            preparing = task
            let made = await withTaskCancellationHandler { await task.result } onCancel: { task.cancel() }
            preparing = nil
            if skipRequested || Task.isCancelled { return .ended(.stopped) }
            // An alert came while its audio was made: it waits, made, for the alert's end.
            if gate.cutRequested { return .cut(at: entry.resumeAt ?? .start) }
            switch made {
            case .success(let clip): entry.clip = clip
            case .failure(let error): return .ended(.failed(reason: "\(error)"))
            }
        }
        let resumeAt = entry.resumeAt ?? .start
        while !Task.isCancelled {
            do {
                await beforePlaying?(entry)
                if skipRequested { return .ended(.stopped) }
                if let cue = entry.cue, resumeAt.frame == 0 {
                    // The cue, in the same slot: a cue that cannot be played is logged, and
                    // the clip plays anyway. (A clip going on after a cut goes on without it.)
                    // At the entry's own level, if it has one; its length is the clip's.
                    switch try await playThrough(cue, playing: .init(volume: entry.playing.volume), gate: gate) {
                    case .ended(.failed(let reason)):
                        logger.warning("cue skipped before \(entry.clip.id): \(reason)", metadata: Self.fields(entry))
                    case .cut:
                        return .cut(at: .start)
                    default:
                        break
                    }
                    if skipRequested { return .ended(.stopped) }
                }
                let end = try await playThrough(entry.clip, from: resumeAt.frame, playing: entry.playing, gate: gate)
                // Its tail is heard before it counts as played, when nothing follows at once (an
                // alert's sounding is followed by its silence, unless it repeats back to back).
                let silenceFollows = currentIsSounding ? (alert?.settings.every ?? .zero) > .zero : waiting.isEmpty
                if case .ended(let outcome) = end, outcome.reachedItsEnd, silenceFollows { try await player.finishBuffered() }
                return end
            } catch let error as AudioDeviceError where error.code == .unsupportedFormat {
                // Retrying cannot help: the device will never take this clip's format. The
                // clip fails (its reason names the device, the format and what to use
                // instead) and the queue goes on.
                return .ended(.failed(reason: "\(entry.clip.source.file): \(error)"))
            } catch let error as AudioDeviceError {
                // Skipped while the device failed: no retry. (`finish` logs the skip.)
                if skipRequested { break }
                let delay = backoff.next()
                // One warning per distinct problem; repeats of the same one go to debug.
                if error != lastProblem {
                    logger.warning("\(error); \(entry.clip.id) stays queued, retrying in \(DurationText.format(delay))", metadata: Self.fields(entry, device: error.device))
                } else {
                    logger.debug("\(error); retrying in \(DurationText.format(delay))", metadata: Self.fields(entry, device: error.device))
                }
                lastProblem = error
                retryingHead = true
                await player.waitForDevice(error, retryIn: delay)
                // Skipped or cut while the player took the news: there is no wait to cancel yet.
                if skipRequested { break }
                if gate.cutRequested { return .cut(at: resumeAt) }
                // The session's end is waiting for this clip, which now waits for its device:
                // the session ends, and the clip stays first in the queue.
                if closing { stopWaitingForTheEnd() }
                let clock = time.clock
                let wait = Task { try await clock.sleep(for: delay) }
                retryWait = wait
                let slept = await withTaskCancellationHandler {
                    (try? await wait.value) != nil
                } onCancel: {
                    wait.cancel()
                }
                retryWait = nil
                // Cut by an urgent entry while waiting: it goes back to wait after it.
                if !skipRequested, !Task.isCancelled, gate.cutRequested { return .cut(at: resumeAt) }
                // Cancelled by `skip()`, or shutting down: either way the slot ends here.
                guard slept, !skipRequested else { break }
                if case .fixedTime(let due) = entry.origin, grace.isMissed(due: Double(due), now: time.wallClock()) {
                    // Not played later than that: the device came back too long after its time.
                    return .ended(.missed(reason: "the audio device was missing for longer after its time than a fixed time may still play: \(grace.words)"))
                }
                currentStartedAt = time.wallClock()
            } catch {
                return .ended(.failed(reason: "\(error)"))
            }
        }
        // Skipped or shut down while waiting.
        return .ended(.stopped)
    }

    /// Plays one clip of the slot (the cue or the clip) to its end, from `frame`. A pause
    /// stops it where the listener stopped hearing it, and it goes on from there once
    /// resumed; a skip while paused ends it, and an urgent entry cuts it there.
    func playThrough(_ clip: PlayableClip, from frame: Int = 0, playing: QueueEntry.Playing, gate: PauseSwitch) async throws -> SlotEnd {
        var from = frame
        while true {
            switch try await player.play(clip, from: from, pause: gate, playing: playing) {
            case .ended(let outcome):
                return .ended(outcome)
            case .cut(let frame, let elapsed):
                return .cut(at: .init(frame: frame, seconds: elapsed.secondsDouble))
            case .paused(let frame, let elapsed, let total):
                pausedPosition = (elapsed, total)
                await waitWhilePaused()
                pausedPosition = nil
                if skipRequested || Task.isCancelled { return .ended(.stopped) }
                if gate.cutRequested { return .cut(at: .init(frame: frame, seconds: elapsed.secondsDouble)) }
                from = frame
            }
        }
    }

    /// The entry at the head no longer waits for its device (it played, failed or was
    /// skipped); the player shows the device as it is again.
    func endDeviceWait() async {
        guard retryingHead else { return }
        retryingHead = false
        await player.deviceWaitEnded()
    }

    /// The log fields of an entry: `journalctl CLIP=ward` finds every line about it.
    static func fields(_ entry: QueueEntry, device: String? = nil) -> Logger.Metadata {
        var fields: Logger.Metadata = ["clip": "\(entry.clip.id)", "ticket": "\(entry.ticket)", "file": "\(entry.clip.source.file)"]
        if let requester = entry.origin.requester { fields["client"] = "\(requester.name)" }
        if let device { fields["device"] = "\(device)" }
        return fields
    }

    func finish(_ entry: QueueEntry, _ outcome: PlayOutcome) {
        let clip = entry.clip
        var fields = Self.fields(entry)
        fields["outcome"] = "\(outcome.name)"
        switch outcome {
        case .completed(let duration):
            logger.info("played \(clip.id) (\(clip.source.file), \(DurationText.format(duration)))", metadata: fields)
        case .stopped:
            // The log uses the history's words: skipped, failed, ended early.
            logger.info("skipped \(clip.id) (\(clip.source.file))", metadata: fields)
        case .failed(let reason):
            logger.warning("failed \(clip.id): \(reason)", metadata: fields)
        case .endedEarly(let reason):
            logger.warning("\(clip.id) ended early: \(reason)", metadata: fields)
        case .missed(let reason):
            logger.warning("missed \(clip.id): \(reason)", metadata: fields)
        case .notPlayed(let reason), .heldBack(let reason):
            logger.info("skipped \(clip.id): \(reason)", metadata: fields)
        case .alert(let reason):
            logger.notice("\(clip.id): \(reason)", metadata: fields)
        }
        let play = plays.add(entry, startedAt: currentStartedAt ?? time.wallClock(), outcome: outcome)
        current = nil
        currentStartedAt = nil
        started = nil
        events.publish(.finished(play))
        stopWaitingForTheEnd()
    }
}
