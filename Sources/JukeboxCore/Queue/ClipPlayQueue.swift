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
    public static let historyLimit = PlayHistory.limit
    /// An entry that was playing when the daemon died this many times in a row is not tried
    /// again: something in it takes the player down (see `restore`).
    public static let crashLimit = 2
    public static let crashLoopReason = "stopped the player twice; skipped"

    let player: Player
    let events: EventBus
    let beforePlaying: BeforePlaying?
    let afterPlaying: AfterPlaying?
    let prepare: Prepare?
    let time: TimeSource
    let logger: Logger
    let wakeups: AsyncStream<Void>
    let wake: AsyncStream<Void>.Continuation

    /// What waits, in the order it plays, and what is held for the end of quiet hours.
    var order: PlayOrder
    /// What has played, and the counts.
    var plays = PlayHistory()
    public var waiting: Deque<QueueEntry> { order.waiting }
    /// Clients' requests to play once quiet hours end (`afterQuiet`), in the order they came;
    /// `QuietHours` releases them to the back of `waiting`. They count towards the capacity.
    public var held: Deque<QueueEntry> { order.held }
    public internal(set) var current: QueueEntry?
    public internal(set) var currentStartedAt: Double?
    public var playedCount: Int { plays.playedCount }
    public var failedCount: Int { plays.failedCount }
    /// Every entry that ended since the daemon started, by how (`PlayOutcome.name`), and the
    /// fixed times among them that missed their time: what `/metrics` counts.
    public var outcomes: [String: Int] { plays.outcomes }
    public var missedCount: Int { plays.missedCount }
    /// The entry at the head failed on its device and is being retried (from its first
    /// failure until its slot ends). The device's own state is the player's.
    public internal(set) var retryingHead = false
    /// Paused by a client: nothing new starts, and the clip playing now stops mid-way. The
    /// player reads it at every block; only the queue sets it.
    let pauseSwitch = PauseSwitch()
    public var isPaused: Bool { pauseSwitch.isOn }
    var resumeWaiters: [CheckedContinuation<Void, Never>] = []
    /// How far into the clip playing now it was paused, for `status`.
    var pausedPosition: (elapsed: Duration, total: Duration)?
    public var history: Deque<PlayRecord> { plays.plays }
    /// The last play of earlier runs (its `PlayRecord.seq`; 0: none).
    public var lastPlayRestored: UInt64 { plays.lastSeqRestored }
    public var stats: [String: ClipStats] { plays.stats }
    var nextTicket: UInt64 = 1
    var closing = false
    var currentEnded: [CheckedContinuation<Void, Never>] = []
    /// The entry playing now and how many times in a row it has been started without
    /// finishing, counting starts before the daemon last died. Saved with the state, so a
    /// clip that crashes the player cannot make the daemon crash-loop (`restore`).
    public internal(set) var started: StartMark?
    /// The first entry after a restart, and how often it had started without finishing. It
    /// may be what took the daemon down, so its start is saved before it plays (`onRiskyStart`).
    var restoredStart: StartMark?
    /// Called, and awaited, before the first entry after a restart starts: the daemon makes
    /// the start durable there, so that if this entry brings the daemon down, the crash is
    /// counted however quickly it comes.
    var onRiskyStart: (@Sendable () async -> Void)?
    /// Set by `skip()`; the entry ends as skipped even if it is waiting for its device.
    var skipRequested = false
    /// How late a clip queued at its `at` time may still start after waiting for a missing
    /// device (the session's `atGrace`, `missed` and `playLateWithin`).
    var grace = StartGrace(onTime: Session.defaultAtGrace, missed: .skip)
    /// What becomes of a clip an urgent entry cuts (the session's `afterCut`).
    var afterCut: AfterCut = .resume
    var retryWait: Task<Void, any Error>?
    /// An announcement's audio being made for the entry at the head; a skip cancels it.
    var preparing: Task<PlayableClip, any Error>?
    /// The alert that is on: while it is, the queue sounds it and nothing else
    /// (`ClipPlayQueue+Alerts`).
    public internal(set) var alert: AlertRun?
    /// Cuts the alert's sounding (or its end clip) when the alert ends or is replaced; a
    /// pause never stops an alert.
    let alertSwitch = PauseSwitch()
    /// Counts the alerts' starts and ends, so a sounding that ended can tell it is stale.
    var alertGeneration = 0
    /// The silence between two soundings, which an end or a new alert cuts short.
    var alertGap: Task<Void, any Error>?
    /// `current` is a sounding of the alert: no waiting entry, and nothing a skip ends.
    var currentIsSounding = false
    /// Why the alert's sound last failed, so it is said once, not at every try.
    var alertFailure: String?

    public init(
        player: Player, events: EventBus = EventBus(), time: TimeSource = .system, capacity: Int = ClipPlayQueue.defaultCapacity,
        logger: Logger, beforePlaying: BeforePlaying? = nil, afterPlaying: AfterPlaying? = nil, prepare: Prepare? = nil
    ) {
        self.afterPlaying = afterPlaying
        self.prepare = prepare
        self.player = player
        self.events = events
        self.time = time
        order = PlayOrder(capacity: capacity)
        self.logger = logger
        self.beforePlaying = beforePlaying
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Takes how late a fixed time may still start (`Session.grace`) and the session's
    /// `afterCut` (at start-up and on every reload).
    public func configure(grace: StartGrace, afterCut: AfterCut) {
        self.grace = grace
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
        try await enqueue(contentsOf: [clip], cue: cue, origin: origin, urgent: urgent, playing: playing)[0]
    }

    /// Adds several clips as one request: all are accepted, in order and together, or none.
    /// Urgent ones go in in one step, before the clip they cut, which is cut once.
    public func enqueue(
        contentsOf clips: [PlayableClip], cue: PlayableClip? = nil, origin: QueueEntry.Origin, urgent: Bool = false, playing: QueueEntry.Playing = .asIs
    ) async throws(QueueFullError) -> [(entry: QueueEntry, position: Int)] {
        guard order.hasRoom(for: clips.count) else { throw QueueFullError(capacity: order.capacity) }
        guard !clips.isEmpty else { return [] }
        let entries = newEntries(clips, cue: cue, origin: origin, urgent: urgent, playing: playing)
        let accepted = Array(zip(entries, order.insert(entries))).map { (entry: $0.0, position: $0.1) }
        wake.yield()
        for (entry, position) in accepted { events.publish(.queued(entry, position: position)) }
        if urgent { await cutCurrent() }
        return accepted
    }

    /// Entries for `clips`, each with the next ticket.
    func newEntries(_ clips: [PlayableClip], cue: PlayableClip?, origin: QueueEntry.Origin, urgent: Bool, playing: QueueEntry.Playing) -> [QueueEntry] {
        clips.map { clip in
            defer { nextTicket += 1 }
            return QueueEntry(ticket: nextTicket, clip: clip, cue: cue, origin: origin, urgent: urgent, playing: playing)
        }
    }

    /// An urgent entry waits: the entry playing now, unless it is urgent itself, stops where
    /// it is heard (or stops waiting for its device, or for the end of a pause) and goes back
    /// to wait after the urgent entries; see `putBack`.
    func cutCurrent() async {
        guard let current, !current.urgent, !pauseSwitch.cutRequested else { return }
        pauseSwitch.requestCut(true)
        retryWait?.cancel()
        wakeResumeWaiters()
        await player.pauseSwitched()
    }

    /// Holds clips, all or none, until quiet hours end (`releaseHeld`): a client asked for
    /// them to wait rather than play now.
    public func hold(contentsOf clips: [PlayableClip], cue: PlayableClip? = nil, origin: QueueEntry.Origin, playing: QueueEntry.Playing = .asIs) throws(QueueFullError) -> [QueueEntry] {
        guard order.hasRoom(for: clips.count) else { throw QueueFullError(capacity: order.capacity) }
        let accepted = newEntries(clips, cue: cue, origin: origin, urgent: false, playing: playing)
        order.hold(accepted)
        for entry in accepted { events.publish(.held(entry)) }
        return accepted
    }

    /// Moves every held request to the back of the queue, in the order they came, and
    /// returns them.
    @discardableResult
    public func releaseHeld() -> [QueueEntry] {
        let released = order.releaseHeld()
        for (entry, position) in released { events.publish(.queued(entry, position: position)) }
        if !released.isEmpty { wake.yield() }
        return released.map(\.entry)
    }

    /// Removes a waiting entry; returns false if it is not waiting (playing, played or unknown).
    @discardableResult
    public func remove(ticket: UInt64) -> Bool {
        guard order.remove(ticket: ticket) else { return false }
        events.publish(.removed([ticket]))
        return true
    }

    /// Drops every waiting entry, and those held for the end of quiet hours; the clip playing
    /// now goes on. Returns the removed tickets.
    @discardableResult
    public func clear() -> [UInt64] {
        let tickets = order.removeAll { _ in true }
        if !tickets.isEmpty { events.publish(.removed(tickets)) }
        return tickets
    }

    /// Ends what `client` asked for (everything, when nil): its waiting and held entries are
    /// dropped and, if it queued the clip playing now, that clip is skipped.
    public func stop(queuedBy client: String?) async -> (removed: [UInt64], skipped: QueueEntry?) {
        func ours(_ entry: QueueEntry) -> Bool { client.map { entry.origin.requester?.name == $0 } ?? true }
        let removed = order.removeAll(where: ours)
        if !removed.isEmpty { events.publish(.removed(removed)) }
        guard let current, ours(current), !currentIsSounding else { return (removed, nil) }
        return (removed, await skip())
    }

    /// Stops the clip playing now; the queue goes on. Returns the entry that was stopped.
    /// An entry waiting for its device (retrying) ends too: skip always moves on.
    public func skip() async -> QueueEntry? {
        // An alert sounds until it is ended (`endAlert`), not skipped.
        guard let current, !currentIsSounding else { return nil }
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

    /// Returns once the queue is not paused, the entry playing now was skipped or cut, an
    /// alert is on (a pause never holds one back), or the task is cancelled.
    func waitWhilePaused() async {
        while isPaused, alert == nil, !Task.isCancelled, !(current != nil && (skipRequested || pauseSwitch.cutRequested)) {
            await withTaskCancellationHandler {
                await withCheckedContinuation { resumeWaiters.append($0) }
            } onCancel: {
                Task { await self.wakeResumeWaiters() }
            }
        }
    }

    func wakeResumeWaiters() {
        let waiters = resumeWaiters
        resumeWaiters = []
        waiters.forEach { $0.resume() }
    }

    /// Why the scheduler must not pick now, or nil when it may.
    public enum PickBlock: Sendable, Equatable {
        /// An alert is on: nothing else plays.
        case alert
        case paused
        /// The entry at the head waits for a missing device: a pick would only wait behind it
        /// and build a backlog to play back to back later.
        case waitingForDevice
        /// The last scheduled pick has not started yet (clients filled the queue).
        case previousPickWaiting
    }

    public var pickBlock: PickBlock? {
        if alert != nil { return .alert }
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
        public var pickBlock: PickBlock?
        /// The alert that is on.
        public var alert: AlertRun?
    }

    public func snapshot() -> Snapshot {
        Snapshot(current: current, currentStartedAt: currentStartedAt,
                 waiting: waiting, held: held, paused: isPaused, pausedPosition: pausedPosition, played: playedCount, failed: failedCount,
                 stats: stats, history: history, pickBlock: pickBlock, alert: alert)
    }

    /// The queue as it should survive a restart: the clip playing now first (after a crash it
    /// plays again from its start, or from where a cut left it), then the waiting entries in
    /// order; and the start mark of the clip playing now, which a clean shutdown clears; and
    /// the requests held until quiet hours end. While urgent entries wait to cut in, they come
    /// before the clip they are cutting.
    public func persisted() -> (
        entries: [QueueEntry], held: [QueueEntry], nextTicket: UInt64, stats: [String: ClipStats], history: [PlayRecord], started: StartMark?, paused: Bool,
        alert: AlertRun?
    ) {
        // A sounding of the alert is not a waiting entry: the alert itself is saved, and sounds
        // again after a restart.
        (order.persisted(current: currentIsSounding ? nil : current), Array(held), nextTicket, stats, Array(history), started, isPaused, alert)
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
        paused: Bool = false
    ) async {
        if paused { pauseSwitch.set(true) }
        plays.restore(plays: history, stats: stats)
        var entries = entries[...]
        if let started, let head = entries.first, head.ticket == started.ticket, started.count >= Self.crashLimit {
            logger.warning("\(head.clip.id) (ticket \(head.ticket), \(head.clip.source.file)) was playing each of the last \(started.count) times the daemon stopped without shutting down; \(Self.crashLoopReason)", metadata: Self.fields(head))
            entries = entries.dropFirst()
            plays.add(head, startedAt: time.wallClock(), outcome: .failed(reason: Self.crashLoopReason))
        }
        if let head = entries.first {
            restoredStart = StartMark(ticket: head.ticket, count: head.ticket == started?.ticket ? started?.count ?? 0 : 0)
        }
        order.restore(waiting: entries, held: held)
        if !order.isEmpty { wake.yield() }
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
    func stopWaitingForTheEnd() {
        for waiter in currentEnded { waiter.resume() }
        currentEnded = []
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.consume() }
        await player.shutdown()
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
        let play = plays.add(entry, startedAt: Double(due), outcome: outcome)
        events.publish(.finished(play))
    }

    /// Fixed times missed that are counted only (beyond those the history lists one by one).
    public func countMissed(_ count: Int) { plays.countMissed(count) }
}
