import DequeModule
import Logging
import ServiceLifecycle

/// The single, strictly FIFO play queue. Every enqueue appends to `waiting` and yields into an
/// `AsyncStream` consumed by one loop (`run()`), which takes entries from the front of
/// `waiting`, runs `beforePlaying` and then plays the entry's cue and its clip, so two clips
/// can never overlap and they play in the order they were accepted. Scheduled picks and
/// client requests share this queue.
///
/// The queue owns what plays, whether it is paused, and the retrying of an entry whose device
/// failed; the player owns the output and the device's state, which the queue reports its
/// waits to (`Player.waitForDevice`). Nobody writes another's state back.
///
/// The stream carries only a wake-up, and keeps at most one: the entries themselves live in
/// `waiting` alone, so an entry that is removed or cleared is freed at once, even while the
/// consumer is paused or busy (a stream of entries would hold every one until it was read).
public actor ClipPlayQueue: Service {
    /// Runs in the consumer, right before each entry's cue and clip (the hooks).
    public typealias BeforePlaying = @Sendable (QueueEntry) async -> Void
    /// Runs in the consumer once a clip has ended, before the next one starts; the last
    /// argument says whether another entry waits to start now.
    public typealias AfterPlaying = @Sendable (QueueEntry, PlayOutcome, _ anotherWaits: Bool) async -> Void
    /// Makes an announcement's audio (`PlayableClip.speech`) before its turn begins; what it
    /// throws fails the entry with that reason. Cancelled by a skip.
    public typealias Prepare = @Sendable (PlayableClip) async throws -> PlayableClip

    public static let defaultCapacity = 10_000
    public static let historyLimit = 200
    /// An entry that was playing when the daemon died this many times in a row is not tried
    /// again: something in it takes the player down (see `restore`).
    public static let crashLimit = 2
    public static let crashLoopReason = "stopped the player twice; skipped"

    let player: Player
    private let events: EventBus
    private let beforePlaying: BeforePlaying?
    private let afterPlaying: AfterPlaying?
    private let prepare: Prepare?
    private let time: TimeSource
    private let logger: Logger
    private let capacity: Int
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    public private(set) var waiting = Deque<QueueEntry>()
    /// Clients' requests to play once quiet hours end (`afterQuiet`), in the order they came;
    /// `QuietHours` releases them to the back of `waiting`. They count towards `capacity`.
    public private(set) var held = Deque<QueueEntry>()
    public private(set) var current: QueueEntry?
    public private(set) var currentStartedAt: Double?
    public private(set) var playedCount = 0
    public private(set) var failedCount = 0
    /// Every entry that ended since the daemon started, by how (`PlayOutcome.name`), and the
    /// fixed times among them that missed their time: what `/metrics` counts.
    public private(set) var outcomes: [String: Int] = [:]
    public private(set) var missedCount = 0
    /// The entry at the head failed on its device and is being retried (from its first
    /// failure until its slot ends). The device's own state is the player's.
    public private(set) var retryingHead = false
    /// Paused by a client: nothing new starts, and the clip playing now stops mid-way. The
    /// player reads it at every block; only the queue sets it.
    private let pauseSwitch = PauseSwitch()
    public var isPaused: Bool { pauseSwitch.isOn }
    private var resumeWaiters: [CheckedContinuation<Void, Never>] = []
    /// How far into the clip playing now it was paused, for `status`.
    private var pausedPosition: (elapsed: Duration, total: Duration)?
    public private(set) var history = Deque<PlayRecord>()
    /// The number the next play that ends gets (`PlayRecord.seq`).
    private var nextPlaySeq: UInt64 = 1
    /// The last play (`PlayRecord.seq`) that MQTT's Playback events have told of: kept with
    /// the state, so none is told twice across a restart.
    public private(set) var playEventsTold: UInt64 = 0
    public private(set) var stats: [String: ClipStats] = [:]
    private var nextTicket: UInt64 = 1
    private var closing = false
    private var currentEnded: [CheckedContinuation<Void, Never>] = []
    /// The entry playing now and how many times in a row it has been started without
    /// finishing, counting starts before the daemon last died. Saved with the state, so a
    /// clip that crashes the player cannot make the daemon crash-loop (`restore`).
    public private(set) var started: StartMark?
    /// The first entry after a restart, and how often it had started without finishing. It
    /// may be what took the daemon down, so its start is saved before it plays (`onRiskyStart`).
    private var restoredStart: StartMark?
    /// Called, and awaited, before the first entry after a restart starts: the daemon makes
    /// the start durable there, so that if this entry brings the daemon down, the crash is
    /// counted however quickly it comes.
    private var onRiskyStart: (@Sendable () async -> Void)?
    /// Set by `skip()`; the entry ends as skipped even if it is waiting for its device.
    private var skipRequested = false
    /// How late a clip queued at its `at` time may still start after waiting for a missing
    /// device (the session's `atGrace`, or with `missed: play-late` its `playLateWithin`).
    private var fixedTimeGrace: Duration = Session.defaultAtGrace
    /// What becomes of a clip an urgent entry cuts (the session's `afterCut`).
    private var afterCut: AfterCut = .resume
    private var retryWait: Task<Void, any Error>?
    /// An announcement's audio being made for the entry at the head; a skip cancels it.
    private var preparing: Task<PlayableClip, any Error>?

    public init(
        player: Player, events: EventBus = EventBus(), time: TimeSource = .system, capacity: Int = ClipPlayQueue.defaultCapacity,
        logger: Logger, beforePlaying: BeforePlaying? = nil, afterPlaying: AfterPlaying? = nil, prepare: Prepare? = nil
    ) {
        self.afterPlaying = afterPlaying
        self.prepare = prepare
        self.player = player
        self.events = events
        self.time = time
        self.capacity = capacity
        self.logger = logger
        self.beforePlaying = beforePlaying
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Which entry has been started how many times in a row without finishing.
    public struct StartMark: Codable, Sendable, Equatable {
        public var ticket: UInt64
        public var count: Int
        public init(ticket: UInt64, count: Int) {
            self.ticket = ticket
            self.count = count
        }
    }

    /// Takes how late a fixed time may still start (`Session.latestStart`) and the session's
    /// `afterCut` (at start-up and on every reload).
    public func configure(latestStart: Duration, afterCut: AfterCut) {
        fixedTimeGrace = latestStart
        self.afterCut = afterCut
    }

    public func setRiskyStartHook(_ hook: @escaping @Sendable () async -> Void) {
        onRiskyStart = hook
    }

    /// Appends a clip; it plays after everything already accepted. A clip whose `at` time
    /// came goes in front of every waiting entry but those queued the same way (and urgent
    /// entries, and a clip cut by them), so nothing waiting makes a fixed time later than the
    /// clip playing now does. Returns the entry and its position among the waiting entries
    /// (1 = next).
    ///
    /// `urgent` (`now`): it goes before every waiting entry that is not urgent, after those
    /// that are, and the clip playing now is cut where it is heard, unless it is urgent too;
    /// the cut clip then waits right after the urgent entries (`afterCut`).
    @discardableResult
    public func enqueue(
        _ clip: PlayableClip, cue: PlayableClip? = nil, origin: QueueEntry.Origin, urgent: Bool = false, playing: QueueEntry.Playing = .asIs
    ) async throws(QueueFullError) -> (entry: QueueEntry, position: Int) {
        guard waiting.count + held.count < capacity else { throw QueueFullError(capacity: capacity) }
        let entry = QueueEntry(ticket: nextTicket, clip: clip, cue: cue, origin: origin, urgent: urgent, playing: playing)
        nextTicket += 1
        let index: Int = if urgent {
            waiting.firstIndex { !$0.urgent } ?? waiting.count
        } else if origin.isFixedTime {
            waiting.firstIndex { !$0.urgent && $0.resumeAt == nil && !$0.origin.isFixedTime } ?? waiting.count
        } else {
            waiting.count
        }
        waiting.insert(entry, at: index)
        wake.yield()
        events.publish(.queued(entry, position: index + 1))
        if urgent { await cutCurrent() }
        return (entry, index + 1)
    }

    /// Appends several clips as one request: all are accepted, in order, or none.
    public func enqueue(
        contentsOf clips: [PlayableClip], cue: PlayableClip? = nil, origin: QueueEntry.Origin, urgent: Bool = false, playing: QueueEntry.Playing = .asIs
    ) async throws(QueueFullError) -> [(entry: QueueEntry, position: Int)] {
        guard waiting.count + held.count + clips.count <= capacity else { throw QueueFullError(capacity: capacity) }
        var accepted: [(entry: QueueEntry, position: Int)] = []
        for clip in clips { accepted.append(try await enqueue(clip, cue: cue, origin: origin, urgent: urgent, playing: playing)) }
        return accepted
    }

    /// An urgent entry waits: the entry playing now, unless it is urgent itself, stops where
    /// it is heard (or stops waiting for its device, or for the end of a pause) and goes back
    /// to wait after the urgent entries; see `putBack`.
    private func cutCurrent() async {
        guard let current, !current.urgent, !pauseSwitch.cutRequested else { return }
        pauseSwitch.requestCut(true)
        retryWait?.cancel()
        wakeResumeWaiters()
        await player.pauseSwitched()
    }

    /// Holds clips, all or none, until quiet hours end (`releaseHeld`): a client asked for
    /// them to wait rather than play now.
    public func hold(contentsOf clips: [PlayableClip], cue: PlayableClip? = nil, origin: QueueEntry.Origin, playing: QueueEntry.Playing = .asIs) throws(QueueFullError) -> [QueueEntry] {
        guard waiting.count + held.count + clips.count <= capacity else { throw QueueFullError(capacity: capacity) }
        var accepted: [QueueEntry] = []
        for clip in clips {
            let entry = QueueEntry(ticket: nextTicket, clip: clip, cue: cue, origin: origin, playing: playing)
            nextTicket += 1
            held.append(entry)
            accepted.append(entry)
            events.publish(.held(entry))
        }
        return accepted
    }

    /// Moves every held request to the back of the queue, in the order they came, and
    /// returns them.
    @discardableResult
    public func releaseHeld() -> [QueueEntry] {
        let released = Array(held)
        held.removeAll()
        for entry in released {
            waiting.append(entry)
            events.publish(.queued(entry, position: waiting.count))
        }
        if !released.isEmpty { wake.yield() }
        return released
    }

    /// Removes a waiting entry; returns false if it is not waiting (playing, played or unknown).
    @discardableResult
    public func remove(ticket: UInt64) -> Bool {
        if let index = waiting.firstIndex(where: { $0.ticket == ticket }) {
            waiting.remove(at: index)
        } else if let index = held.firstIndex(where: { $0.ticket == ticket }) {
            held.remove(at: index)
        } else {
            return false
        }
        events.publish(.removed([ticket]))
        return true
    }

    /// Drops every waiting entry, and those held for the end of quiet hours; the clip playing
    /// now goes on. Returns the removed tickets.
    @discardableResult
    public func clear() -> [UInt64] {
        let tickets = waiting.map(\.ticket) + held.map(\.ticket)
        waiting.removeAll()
        held.removeAll()
        if !tickets.isEmpty { events.publish(.removed(tickets)) }
        return tickets
    }

    /// Ends what `client` asked for (everything, when nil): its waiting and held entries are
    /// dropped and, if it queued the clip playing now, that clip is skipped.
    public func stop(queuedBy client: String?) async -> (removed: [UInt64], skipped: QueueEntry?) {
        func ours(_ entry: QueueEntry) -> Bool { client.map { entry.origin == .client($0) } ?? true }
        let removed = waiting.filter(ours).map(\.ticket) + held.filter(ours).map(\.ticket)
        waiting.removeAll(where: ours)
        held.removeAll(where: ours)
        if !removed.isEmpty { events.publish(.removed(removed)) }
        guard let current, ours(current) else { return (removed, nil) }
        return (removed, await skip())
    }

    /// Stops the clip playing now; the queue goes on. Returns the entry that was stopped.
    /// An entry waiting for its device (retrying) ends too: skip always moves on.
    public func skip() async -> QueueEntry? {
        guard let current else { return nil }
        skipRequested = true
        retryWait?.cancel()
        preparing?.cancel()
        // A clip paused mid-way ends too; the queue stays paused.
        wakeResumeWaiters()
        await player.stopCurrent()
        return current
    }

    public func pause() async {
        guard !isPaused else { return }
        pauseSwitch.set(true)
        events.publish(.paused)
        await player.pauseSwitched()
    }

    public func resume() {
        guard isPaused else { return }
        pauseSwitch.set(false)
        wakeResumeWaiters()
        events.publish(.resumed)
    }

    /// Returns once the queue is not paused, the entry playing now was skipped, or the task
    /// is cancelled.
    private func waitWhilePaused() async {
        while isPaused, !Task.isCancelled, !(current != nil && (skipRequested || pauseSwitch.cutRequested)) {
            await withTaskCancellationHandler {
                await withCheckedContinuation { resumeWaiters.append($0) }
            } onCancel: {
                Task { await self.wakeResumeWaiters() }
            }
        }
    }

    private func wakeResumeWaiters() {
        let waiters = resumeWaiters
        resumeWaiters = []
        waiters.forEach { $0.resume() }
    }

    /// Why the scheduler must not pick now, or nil when it may.
    public enum PickHold: Sendable, Equatable {
        case paused
        /// The entry at the head waits for a missing device: a pick would only wait behind it
        /// and build a backlog to play back to back later.
        case waitingForDevice
        /// The last scheduled pick has not started yet (clients filled the queue).
        case previousPickWaiting
    }

    public var pickHold: PickHold? {
        if isPaused { return .paused }
        if current != nil, retryingHead { return .waitingForDevice }
        if waiting.contains(where: { $0.origin == .scheduler }) { return .previousPickWaiting }
        return nil
    }

    /// The queue at one moment, for `status` and `queue`.
    public struct Snapshot: Sendable {
        public var current: QueueEntry?
        public var currentStartedAt: Double?
        public var waiting: Deque<QueueEntry>
        /// Requests held until quiet hours end.
        public var held: Deque<QueueEntry>
        public var paused: Bool
        /// How far into the clip playing now it was paused.
        public var pausedPosition: (elapsed: Duration, total: Duration)?
        public var played: Int
        public var failed: Int
        public var stats: [String: ClipStats]
        public var history: Deque<PlayRecord>
        public var pickHold: PickHold?
    }

    public func snapshot() -> Snapshot {
        Snapshot(current: current, currentStartedAt: currentStartedAt,
                 waiting: waiting, held: held, paused: isPaused, pausedPosition: pausedPosition, played: playedCount, failed: failedCount,
                 stats: stats, history: history, pickHold: pickHold)
    }

    /// The queue as it should survive a restart: the clip playing now first (after a crash it
    /// plays again from its start, or from where a cut left it), then the waiting entries in
    /// order; and the start mark of the clip playing now, which a clean shutdown clears; and
    /// the requests held until quiet hours end. While urgent entries wait to cut in, they come
    /// before the clip they are cutting.
    public func persisted() -> (
        entries: [QueueEntry], held: [QueueEntry], nextTicket: UInt64, stats: [String: ClipStats], history: [PlayRecord], started: StartMark?, paused: Bool,
        playEventsTold: UInt64
    ) {
        let cutting = current?.urgent == false ? waiting.prefix { $0.urgent } : []
        let entries = Array(cutting) + (current.map { [$0] } ?? []) + Array(waiting.dropFirst(cutting.count))
        return (entries, Array(held), nextTicket, stats, Array(history), started, isPaused, playEventsTold)
    }

    /// Puts saved entries back, in order, keeping their tickets. Call before `run()`.
    ///
    /// `started` says which entry was playing when the daemon stopped without a clean
    /// shutdown, and how many times in a row. One that has already taken the player down
    /// `crashLimit` times goes to the history as failed, with a warning, instead of being
    /// played a third time: otherwise a clip that crashes the player (a decoder or driver
    /// fault) would bring the daemon down on every start, for ever. Nothing else is dropped.
    public func restore(
        entries: [QueueEntry], held: [QueueEntry] = [], nextTicket: UInt64, stats: [String: ClipStats], history: [PlayRecord], started: StartMark? = nil,
        paused: Bool = false, playEventsTold: UInt64 = 0
    ) async {
        self.playEventsTold = playEventsTold
        if paused { pauseSwitch.set(true) }
        self.held.append(contentsOf: held)
        self.stats = stats
        self.history = Deque(history.suffix(Self.historyLimit))
        let lastPlay = history.map(\.seq).max() ?? 0
        nextPlaySeq = max(nextPlaySeq, lastPlay + 1)
        // Never told of any (no MQTT before): what ended before this start is not told now.
        if playEventsTold == 0 { self.playEventsTold = lastPlay }
        var entries = entries[...]
        if let started, let head = entries.first, head.ticket == started.ticket, started.count >= Self.crashLimit {
            logger.warning("\(head.clip.id) (ticket \(head.ticket), \(head.clip.source.file)) was playing each of the last \(started.count) times the daemon stopped without shutting down; \(Self.crashLoopReason)", metadata: Self.fields(head))
            entries = entries.dropFirst()
            failedCount += 1
            outcomes["failed", default: 0] += 1
            record(PlayRecord(entry: head, startedAt: time.wallClock(), outcome: .failed(reason: Self.crashLoopReason)))
        }
        if let head = entries.first {
            restoredStart = StartMark(ticket: head.ticket, count: head.ticket == started?.ticket ? started?.count ?? 0 : 0)
        }
        waiting.append(contentsOf: entries)
        if !waiting.isEmpty { wake.yield() }
        self.nextTicket = max(nextTicket, ((entries.map(\.ticket) + held.map(\.ticket)).max() ?? 0) + 1, self.nextTicket)
    }

    /// Lets the clip playing now finish, starts nothing more, and returns once it has ended.
    /// Used when the session's duration is reached. A clip waiting for its device is not
    /// waited for (it could wait for ever): it stays first in the queue, as at a stop, and so
    /// does one whose device fails while it is waited for. Returns at once when cancelled
    /// (a stop), so a stop always stops.
    public func finishAfterCurrent() async {
        closing = true
        guard current != nil, !retryingHead, !Task.isCancelled else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { currentEnded.append($0) }
        } onCancel: {
            Task { await self.stopWaitingForTheEnd() }
        }
    }

    /// Ends every wait of `finishAfterCurrent`.
    private func stopWaitingForTheEnd() {
        for waiter in currentEnded { waiter.resume() }
        currentEnded = []
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.consume() }
        await player.shutdown()
    }

    private func consume() async {
        for await _ in wakeups {
            while !waiting.isEmpty {
                await waitWhilePaused()
                guard !closing, !Task.isCancelled, let entry = waiting.first else { break }
                waiting.removeFirst()
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
                await afterPlaying?(entry, outcome, !waiting.isEmpty)
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
    private func putBack(_ entry: QueueEntry, cutAt point: QueueEntry.ResumePoint) -> PlayOutcome? {
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
        let index = waiting.firstIndex { !$0.urgent } ?? waiting.count
        waiting.insert(back, at: index)
        let from = back.resumeAt?.frame ?? 0 > 0 ? DurationText.format(.seconds(back.resumeAt?.seconds ?? 0)) : "its start"
        logger.info("\(entry.clip.id) (\(at)) was cut by an urgent clip; it goes on from \(from) after the urgent clips (afterCut: \(afterCut.rawValue))", metadata: Self.fields(entry))
        events.publish(.cut(back, position: index + 1))
        return nil
    }

    /// Plays one entry. A device problem keeps the entry here, at the head of the queue, and
    /// retries with backoff until the device is back; the clip then starts from the beginning
    /// (or from where a cut left it). That includes a problem while the last clip's tail
    /// drains: it was not all heard.
    private func playSlot(_ entry: QueueEntry) async -> SlotEnd {
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
                    switch try await playThrough(cue, playing: .init(volume: entry.playing.volume)) {
                    case .ended(.failed(let reason)):
                        logger.warning("cue skipped before \(entry.clip.id): \(reason)", metadata: Self.fields(entry))
                    case .cut:
                        return .cut(at: .start)
                    default:
                        break
                    }
                    if skipRequested { return .ended(.stopped) }
                }
                let end = try await playThrough(entry.clip, from: resumeAt.frame, playing: entry.playing)
                if case .ended(let outcome) = end, outcome.reachedItsEnd, waiting.isEmpty { try await player.finishBuffered() }
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
                if pauseSwitch.cutRequested { return .cut(at: resumeAt) }
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
                if !skipRequested, !Task.isCancelled, pauseSwitch.cutRequested { return .cut(at: resumeAt) }
                // Cancelled by `skip()`, or shutting down: either way the slot ends here.
                guard slept, !skipRequested else { break }
                if case .fixedTime(let due) = entry.origin, time.wallClock() - Double(due) > fixedTimeGrace.secondsDouble {
                    // Not played later than that: the device came back too long after its time.
                    return .ended(.missed(reason: "the audio device was missing for longer after its time than a fixed time may still play (\(DurationText.format(fixedTimeGrace)): atGrace, or playLateWithin with missed: play-late)"))
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
    private func playThrough(_ clip: PlayableClip, from frame: Int = 0, playing: QueueEntry.Playing) async throws -> SlotEnd {
        var from = frame
        while true {
            switch try await player.play(clip, from: from, pause: pauseSwitch, playing: playing) {
            case .ended(let outcome):
                return .ended(outcome)
            case .cut(let frame, let elapsed):
                return .cut(at: .init(frame: frame, seconds: elapsed.secondsDouble))
            case .paused(let frame, let elapsed, let total):
                pausedPosition = (elapsed, total)
                await waitWhilePaused()
                pausedPosition = nil
                if skipRequested || Task.isCancelled { return .ended(.stopped) }
                if pauseSwitch.cutRequested { return .cut(at: .init(frame: frame, seconds: elapsed.secondsDouble)) }
                from = frame
            }
        }
    }

    /// The entry at the head no longer waits for its device (it played, failed or was
    /// skipped); the player shows the device as it is again.
    private func endDeviceWait() async {
        guard retryingHead else { return }
        retryingHead = false
        await player.deviceWaitEnded()
    }

    /// The log fields of an entry: `journalctl CLIP=ward` finds every line about it.
    static func fields(_ entry: QueueEntry, device: String? = nil) -> Logger.Metadata {
        var fields: Logger.Metadata = ["clip": "\(entry.clip.id)", "ticket": "\(entry.ticket)", "file": "\(entry.clip.source.file)"]
        if case .client(let name) = entry.origin { fields["client"] = "\(name)" }
        if let device { fields["device"] = "\(device)" }
        return fields
    }

    private func finish(_ entry: QueueEntry, _ outcome: PlayOutcome) {
        let clip = entry.clip
        var fields = Self.fields(entry)
        fields["outcome"] = "\(outcome.name)"
        outcomes[outcome.name, default: 0] += 1
        switch outcome {
        case .completed(let duration):
            playedCount += 1
            // Counts are the session's clips'; an announcement is not one of them.
            if clip.speech == nil {
                stats[clip.id, default: ClipStats()].timesPlayed += 1
                stats[clip.id]?.lastPlayed = currentStartedAt
            }
            logger.info("played \(clip.id) (\(clip.source.file), \(DurationText.format(duration)))", metadata: fields)
        case .stopped:
            // The log uses the history's words: skipped, failed, ended early.
            logger.info("skipped \(clip.id) (\(clip.source.file))", metadata: fields)
        case .failed(let reason):
            failedCount += 1
            logger.warning("failed \(clip.id): \(reason)", metadata: fields)
        case .endedEarly(let reason):
            failedCount += 1
            logger.warning("\(clip.id) ended early: \(reason)", metadata: fields)
        case .missed(let reason):
            missedCount += 1
            logger.warning("missed \(clip.id): \(reason)", metadata: fields)
        case .notPlayed(let reason):
            logger.info("skipped \(clip.id): \(reason)", metadata: fields)
        }
        let play = record(PlayRecord(entry: entry, startedAt: currentStartedAt ?? time.wallClock(), outcome: outcome))
        current = nil
        currentStartedAt = nil
        started = nil
        events.publish(.finished(play))
        stopWaitingForTheEnd()
    }

    /// Numbers `play` and adds it to the history.
    @discardableResult
    private func record(_ play: PlayRecord) -> PlayRecord {
        var play = play
        play.seq = nextPlaySeq
        nextPlaySeq += 1
        history.append(play)
        if history.count > Self.historyLimit { history.removeFirst() }
        return play
    }

    /// A fixed time of `clip` at `due` that is not played: missed, or skipped for quiet. It
    /// goes to the history with a ticket of its own, and is told as a play that ended so.
    /// (The timetable logs it.)
    public func recordNotPlayed(_ clip: PlayableClip, due: Int64, outcome: PlayOutcome) {
        let entry = QueueEntry(ticket: nextTicket, clip: clip, origin: .fixedTime(due))
        nextTicket += 1
        recordNotPlayed(entry, outcome: outcome)
    }

    /// An entry that was queued at its fixed time but will not play (restored too late).
    public func recordNotPlayed(_ entry: QueueEntry, outcome: PlayOutcome) {
        let due = if case .fixedTime(let moment) = entry.origin { moment } else { Int64(time.wallClock()) }
        outcomes[outcome.name, default: 0] += 1
        if case .missed = outcome { missedCount += 1 }
        let play = record(PlayRecord(entry: entry, startedAt: Double(due), outcome: outcome))
        events.publish(.finished(play))
    }

    /// Fixed times missed that are counted only (beyond those the history lists one by one).
    public func countMissed(_ count: Int) {
        guard count > 0 else { return }
        outcomes["missed", default: 0] += count
        missedCount += count
    }

    /// MQTT's Playback events have told of every play up to `seq`.
    public func markPlayEventsTold(through seq: UInt64) {
        playEventsTold = max(playEventsTold, seq)
    }
}
