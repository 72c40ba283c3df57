import Logging

// Alerts: while one is on, the queue sounds it and nothing else. What waits stays waiting
// (nothing is lost) and plays after the alert's `end` clip once it ends.
extension ClipPlayQueue {
    /// An alert that is on, as the queue sounds it.
    public struct AlertRun: Sendable, Equatable {
        public var settings: AlertSettings
        /// Its sound, and the clip played once at its end.
        public var sound: PlayableClip
        public var endClip: PlayableClip?
        /// Who started it, and when (seconds since the epoch).
        public var by: Requester
        public var since: Double
        /// How many times it has begun to sound.
        public internal(set) var soundings = 0

        public var name: String { settings.name }

        /// An entry of this alert's: a sounding, its end clip, or its run in the history. It
        /// is the starter's, cuts in, and plays at the alert's level.
        public func entry(_ clip: PlayableClip, ticket: UInt64) -> QueueEntry {
            QueueEntry(ticket: ticket, clip: clip, origin: .client(by), urgent: true, playing: .alert(level: settings.level), alert: name)
        }

        public init(settings: AlertSettings, sound: PlayableClip, endClip: PlayableClip?, by: Requester, since: Double) {
            self.settings = settings
            self.sound = sound
            self.endClip = endClip
            self.by = by
            self.since = since
        }
    }

    /// The shortest wait between soundings whose clip failed: a clip that cannot be opened is
    /// not tried in a tight loop.
    static let alertRetryAfterFailure: Duration = .seconds(5)

    /// Starts `run`, at once: the clip playing now stops where it is heard and goes back to
    /// wait (`afterCut`), and an alert that was on is replaced (and goes to the history,
    /// saying so). Returns the one replaced, if any.
    @discardableResult
    public func startAlert(_ run: AlertRun) async -> AlertRun? {
        let replaced = alert
        if let replaced {
            recordAlert(replaced, ending: "replaced by the \(run.name) alert (\(run.by.name))")
        }
        alert = run
        alertChanged()
        if let current {
            // A sounding of the alert replaced, or an end clip: it ends. Any other clip is cut
            // where it is heard, and waits.
            if current.alert != nil { alertSwitch.requestCut(true) } else { pauseSwitch.requestCut(true) }
            retryWait?.cancel()
            await player.pauseSwitched()
        }
        return replaced
    }

    /// Ends the alert that is on, if any, at once (its sound fades out as a cut does): its
    /// `end` clip goes first in the queue, then what waited plays, in order. Returns it.
    @discardableResult
    public func endAlert(by requester: Requester) async -> AlertRun? {
        guard let run = alert else { return nil }
        recordAlert(run, ending: "ended by \(requester.name)")
        alert = nil
        if let end = run.endClip {
            let entry = run.entry(end, ticket: nextTicket)
            nextTicket += 1
            order.putFirst(entry)
            events.publish(.queued(entry, position: 1))
        }
        alertChanged()
        if let current, current.alert != nil {
            alertSwitch.requestCut(true)
            retryWait?.cancel()
            await player.pauseSwitched()
        }
        return run
    }

    /// Whether something starts as soon as the clip playing now ends: an alert's sounding or
    /// end clip, or, unless paused, what waits. (The other players stay low for it.)
    var somethingStartsNext: Bool { alert != nil || waiting.first?.alert != nil || (!waiting.isEmpty && !isPaused) }

    /// Nothing sounds now, and nothing is about to.
    public var nothingSounds: Bool { current == nil && !somethingStartsNext }

    /// The consumer, a pause or a wait between soundings takes up the change at once.
    private func alertChanged() {
        alertGeneration += 1
        alertGap?.cancel()
        wakeResumeWaiters()
        wake.yield()
    }

    /// The alert's run, as one play in the history: from its start to `ending`.
    private func recordAlert(_ run: AlertRun, ending: String) {
        let entry = run.entry(run.sound, ticket: nextTicket)
        nextTicket += 1
        let times = run.soundings == 1 ? "once" : "\(run.soundings) times"
        let play = plays.add(entry, startedAt: run.since, outcome: .alert(reason: "the \(run.name) alert, started by \(run.by.name), sounded \(times); \(ending)"))
        events.publish(.finished(play))
        logger.notice("the \(run.name) alert sounded \(times); \(ending)", metadata: ["alert": "\(run.name)"])
    }

    /// Sounds the alert that is on once, then waits its `every` (or until it ends or is
    /// replaced). Called by the consumer while an alert is on.
    func soundAlert() async {
        guard var run = alert else { return }
        let generation = alertGeneration
        let entry = run.entry(run.sound, ticket: nextTicket)
        nextTicket += 1
        run.soundings += 1
        alert = run
        alertSwitch.requestCut(false)
        current = entry
        currentIsSounding = true
        currentStartedAt = time.wallClock()
        events.publish(.playing(entry))
        logger.debug("playing \(entry.clip.id) (ticket \(entry.ticket)): the \(run.name) alert, sounding \(run.soundings)", metadata: Self.fields(entry))
        let end = await playSlot(entry)
        await endDeviceWait()
        current = nil
        currentIsSounding = false
        currentStartedAt = nil
        alertSwitch.requestCut(false)
        stopWaitingForTheEnd()
        let outcome: PlayOutcome = if case .ended(let ended) = end { ended } else { .stopped }
        if case .failed(let reason) = outcome, generation == alertGeneration, alertFailure != reason {
            alertFailure = reason
            logger.error("the \(run.name) alert could not sound: \(reason); it is tried again every \(DurationText.format(max(run.settings.every, Self.alertRetryAfterFailure)))", metadata: ["alert": "\(run.name)"])
        }
        if case .completed = outcome { alertFailure = nil }
        // Shutting down: the alert stays on in the state file, and sounds again at the start.
        if Task.isCancelled { return }
        // The players stay low between soundings, and for what follows the alert.
        await afterPlaying?(entry, outcome, somethingStartsNext)
        guard !Task.isCancelled, !closing, generation == alertGeneration, alert != nil else { return }
        var gap = run.settings.every
        if case .failed = outcome { gap = max(gap, Self.alertRetryAfterFailure) }
        guard gap > .zero else { return }
        let clock = time.clock
        let wait = Task { try await clock.sleep(for: gap) }
        alertGap = wait
        _ = await withTaskCancellationHandler { try? await wait.value } onCancel: { wait.cancel() }
        alertGap = nil
    }
}
