import Logging
import ServiceLifecycle

/// The scheduler: after a random gap within the session's interval it draws the next clip
/// from a shuffle bag, skipping clips whose time window is closed, and hands it to the play
/// queue with the session's cue. Outside the session's active hours it picks nothing.
/// When the session's duration has passed it lets the current clip finish and returns.
public actor ClipJukebox: Service {
    /// The schedule in force, read at each use.
    let schedule: ScheduleBoard
    private var session: Session { schedule.current.session }
    /// The clips that can be picked at random, from the schedule: enabled, playable, and not
    /// only played at their `at` times. Bag items index this array.
    public private(set) var clips: [Clip]
    private let queue: ClipPlayQueue
    /// Says when nothing may be picked.
    private let quiet: QuietHours
    /// Where the next pick's time is announced (`scheduled` events).
    private let events: EventBus
    private let time: TimeSource
    private let clock: ElapsedClock
    private let logger: Logger
    private var generator: SeededGenerator
    public private(set) var bag: ShuffleBag
    /// When the next pick is due, in seconds since the Unix epoch, for people to read.
    public private(set) var nextPickWallTime: Double?

    public init(
        schedule: ScheduleBoard, queue: ClipPlayQueue, quiet: QuietHours, events: EventBus, time: TimeSource,
        generator: SeededGenerator = SeededGenerator(), logger: Logger
    ) {
        self.time = time
        self.schedule = schedule
        self.clips = Self.shuffled(schedule.current.clips)
        self.queue = queue
        self.quiet = quiet
        self.events = events
        self.clock = ElapsedClock(time.clock)
        self.generator = generator
        self.logger = logger
        self.bag = ShuffleBag(weights: self.clips.map(\.weight))
        schedule.follow { [weak self] _ in await self?.scheduleChanged() }
    }

    private static func shuffled(_ clips: [Clip]) -> [Clip] { clips.filter { $0.enabled && $0.isShuffled } }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.schedule() }
        } catch is CancellationError {
            // Shutdown while waiting for the next pick: nothing to finish.
        }
    }

    /// The session's duration counts from start-up (the clock's zero), so a reload that
    /// changes it moves the end without restarting the count.
    private func schedule() async throws {
        var pickAt: Duration?
        while true {
            let due = pickAt ?? clock.now + randomGap()
            pickAt = due
            if let duration = session.duration, duration <= due {
                nextPickWallTime = nil
                guard try await nap(until: duration) else { continue }
                logger.notice("session \"\(session.name)\" reached its duration of \(DurationText.format(duration)); finishing the current clip")
                await queue.finishAfterCurrent()
                return
            }
            let gap = due - clock.now
            nextPickWallTime = time.wallClock() + gap.secondsDouble
            events.publish(.scheduled(nextPickEpochSeconds: nextPickWallTime))
            logger.debug("next pick in \(DurationText.format(gap))")
            guard try await nap(until: due) else { continue }
            pickAt = nil
            switch await queue.pickBlock {
            case .alert?: logger.debug("an alert is on; nothing picked")
            case .paused?: logger.debug("paused; nothing picked")
            case .waitingForDevice?: logger.debug("a clip is waiting for the audio device; nothing picked")
            case .previousPickWaiting?: logger.debug("the previous scheduled clip is still waiting; nothing picked")
            case nil:
                let now = time.localNow()
                if await quiet.isQuiet(at: now.epochSeconds) {
                    logger.info("\(now): quiet; nothing picked, and nothing saved up for afterwards")
                } else {
                    await pick()
                }
            }
        }
    }

    /// The sleep in progress; a reload cuts it short so a new duration is looked at.
    private let napping = WakeableSleep()

    /// Sleeps until `deadline`. Returns false if a reload woke it early; throws on shutdown.
    private func nap(until deadline: Duration) async throws -> Bool {
        try await napping.sleep(until: deadline, on: clock)
    }

    /// Draws the next eligible clip and queues it; nil when nothing may play now.
    @discardableResult
    public func pick() async -> QueueEntry? {
        let now = time.localNow()
        let (location, holidays) = (session.location, session.holidays)
        guard session.activeHours.allow(now, location: location, holidays: holidays) else {
            logger.debug("\(now): outside the session's active hours; nothing picked")
            return nil
        }
        guard !clips.isEmpty, let index = bag.next(isEligible: {
            clips[$0].windows.allow(now, location: location, holidays: holidays) && clips[$0].dates.allows(now.date, holidays: holidays)
        }, using: &generator) else {
            logger.debug("\(now): no clip's window is open; nothing picked")
            return nil
        }
        let clip = clips[index]
        let cue = session.cue.map { PlayableClip(id: "cue", source: $0, title: "cue") }
        do {
            return try await queue.enqueue(PlayableClip(clip), cue: cue, origin: .scheduler).entry
        } catch {
            logger.warning("scheduled pick \(clip.id) dropped: \(error)", metadata: ["clip": "\(clip.id)"])
            return nil
        }
    }

    /// Where the bag is in its cycle, by clip id, for the state file.
    public func persistedBag() -> PersistedState.Bag {
        PersistedState.Bag(remaining: bag.remaining.map { clips[$0].id }, lastPick: bag.lastPick.map { clips[$0].id }, cycle: bag.cycle)
    }

    /// Continues a saved cycle; ids the session no longer has are dropped.
    public func restoreBag(_ saved: PersistedState.Bag) {
        let index = Dictionary(uniqueKeysWithValues: clips.enumerated().map { ($1.id, $0) })
        bag = ShuffleBag(
            weights: clips.map(\.weight), remaining: saved.remaining.compactMap { index[$0] },
            lastPick: saved.lastPick.flatMap { index[$0] }, cycle: saved.cycle)
    }

    /// Takes up a new schedule. The bag keeps its cycle for clips that still exist, so a
    /// reload never causes early repeats; new clips join at the next cycle.
    private func scheduleChanged() {
        let oldIDs = self.clips.map(\.id)
        let enabled = Self.shuffled(schedule.current.clips)
        let newIndex = Dictionary(uniqueKeysWithValues: enabled.enumerated().map { ($1.id, $0) })
        let remaining = bag.remaining.compactMap { newIndex[oldIDs[$0]] }
        let lastPick = bag.lastPick.flatMap { newIndex[oldIDs[$0]] }
        self.clips = enabled
        bag = ShuffleBag(weights: enabled.map(\.weight), remaining: remaining, lastPick: lastPick, cycle: bag.cycle)
        // The planned pick stands; only the end of the session is looked at again.
        napping.wake()
    }

    private func randomGap() -> Duration {
        let low = session.interval.lowerBound.milliseconds, high = session.interval.upperBound.milliseconds
        return .milliseconds(Int64.random(in: low...max(low, high), using: &generator))
    }
}
