import Logging
import ServiceLifecycle

/// Queues clips at their `at` times. Each moment is worked out from the wall clock and the
/// local zone (`FixedTime.next`), so daylight-saving gaps and repeated hours follow the
/// rules there. It never sleeps longer than a minute at a time, so a clock that is set (a
/// Pi without a battery-backed clock, set by NTP after boot) or a new zone is seen soon.
///
/// A moment that passed more than `atGrace` ago (the daemon was down, the clock jumped) is
/// not played late: the log says it was missed. The moments it has dealt with only move
/// forwards, so a clock set back never plays a time twice.
public actor ClipTimetable: Service {
    private var session: Session
    private var clips: [Clip]
    private let queue: ClipPlayQueue
    /// Says when a time is skipped.
    private let quiet: QuietHours
    private let clock: ElapsedClock
    private let wallClock: WallClock
    private let zone: any LocalZone
    private let logger: Logger
    /// Every moment at or before this has been queued or reported missed.
    private var handledUntil: Int64
    /// The next moment due, and its clip, for `status` and `jukebox next`.
    public private(set) var next: (moment: Int64, clipID: String)?
    private let nap = Nap()

    /// The longest sleep between looks at the wall clock.
    static let longestNap: Int64 = 60
    /// A year: how long it sleeps when no clip has a time, unless a reload wakes it.
    static let untilReloaded: Int64 = 365 * 86_400

    public init(
        session: Session, clips: [Clip]? = nil, queue: ClipPlayQueue, quiet: QuietHours, clock: some Clock<Duration>,
        wallClock: @escaping WallClock = SystemWallClock.now, zone: any LocalZone = SystemLocalTime(), logger: Logger
    ) {
        self.session = session
        self.clips = (clips ?? session.clips).filter { $0.enabled && !$0.at.isEmpty }
        self.queue = queue
        self.quiet = quiet
        self.clock = ElapsedClock(clock)
        self.wallClock = wallClock
        self.zone = zone
        self.logger = logger
        // A time within the grace before start-up still plays: a restart is a short outage.
        handledUntil = Int64(wallClock().rounded(.down)) - session.atGrace.components.seconds
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.keepTime() }
        } catch is CancellationError {
            // Shutdown while waiting for the next time.
        }
    }

    private func keepTime() async throws {
        while true {
            let now = wallSeconds()
            if now > handledUntil {
                var missed = 0
                for due in due(after: handledUntil, upTo: now) {
                    // Marked handled first: the state saved when it is queued says so.
                    handledUntil = max(handledUntil, due.moment)
                    await play(due.clip, due: due.moment, now: now, missedSoFar: &missed)
                }
                if missed > Self.missesLogged {
                    logger.notice("missed \(Plural.count(missed - Self.missesLogged, "more at time")) the clock passed over; none is played late")
                }
            }
            handledUntil = max(handledUntil, now)
            next = upcoming(after: handledUntil).map { ($0.moment, $0.clip.id) }
            // With no times to keep it sleeps until a reload brings some: an idle daemon wakes
            // for nothing.
            if !clips.isEmpty, let moment = next?.moment, moment - now <= Self.longestNap {
                // To the moment itself rather than to whole seconds of waiting, which would
                // wake up to a second late: a time is heard on its second.
                let left = (Double(moment) - wallClock()) * 1000
                try await nap.sleep(for: .milliseconds(max(Int64(left.rounded(.up)), 1)), on: clock)
            } else {
                try await nap.sleep(for: .seconds(clips.isEmpty ? Self.untilReloaded : Self.longestNap), on: clock)
            }
        }
    }

    /// Misses logged one by one when the clock passes over many times at once (set forward
    /// by days); the rest are counted in one line.
    static let missesLogged = 10

    /// Every moment in `after…upTo` of every clip's `at` times, earliest first; clips due at
    /// the same moment in the session's order. At most a day of one time's moments is
    /// listed: the clock set forward by longer passes over the rest, which were missed anyway.
    private func due(after: Int64, upTo now: Int64) -> [(moment: Int64, clip: Clip)] {
        var found: [(moment: Int64, order: Int, clip: Clip)] = []
        for (order, clip) in clips.enumerated() {
            for time in clip.at {
                var from = max(after, now - 86_400)
                while let moment = time.next(after: from, zone: zone, location: session.location, holidays: session.holidays), moment <= now {
                    found.append((moment, order, clip))
                    from = moment
                }
            }
        }
        return found.sorted { ($0.moment, $0.order) < ($1.moment, $1.order) }.map { ($0.moment, $0.clip) }
    }

    /// The next `limit` moments of every clip's `at` times, within `horizon` seconds of now,
    /// earliest first; for `jukebox next`.
    public func plan(limit: Int, horizon: Int64) -> [(moment: Int64, clip: Clip)] {
        let now = wallSeconds()
        var found: [(moment: Int64, clip: Clip)] = []
        var after = max(handledUntil, now)
        while found.count < limit {
            // Each clip's next moment; every clip due at the earliest, in the session's order.
            let nextOfEach = clips.compactMap { clip in
                clip.at.compactMap { $0.next(after: after, zone: zone, location: session.location, holidays: session.holidays) }.min().map { (moment: $0, clip: clip) }
            }
            guard let moment = nextOfEach.map(\.moment).min(), moment <= now + horizon else { break }
            found += nextOfEach.filter { $0.moment == moment }
            after = moment
        }
        return Array(found.prefix(limit))
    }

    /// The earliest moment after `after` of any clip's `at` times.
    private func upcoming(after: Int64) -> (moment: Int64, clip: Clip)? {
        var best: (moment: Int64, clip: Clip)?
        for clip in clips {
            for time in clip.at {
                guard let moment = time.next(after: after, zone: zone, location: session.location, holidays: session.holidays) else { continue }
                if best.map({ moment < $0.moment }) ?? true { best = (moment, clip) }
            }
        }
        return best
    }

    private func play(_ clip: Clip, due: Int64, now: Int64, missedSoFar missed: inout Int) async {
        let reading = zone.localTime(at: due)
        let when = "\(reading.date) \(TimeOfDay(minuteOfDay: reading.secondOfDay / 60)!)"
        let late = now - due
        guard late <= session.atGrace.components.seconds else {
            missed += 1
            guard missed <= Self.missesLogged else { return }
            logger.notice(
                "missed \(clip.id) at \(when): it was due \(DurationText.format(.seconds(late))) ago, longer than atGrace (\(DurationText.format(session.atGrace))); not played late",
                metadata: ["clip": "\(clip.id)"])
            return
        }
        if await quiet.isQuiet(at: due) {
            logger.info("skipped \(clip.id) at \(when): quiet; it is not saved up for afterwards", metadata: ["clip": "\(clip.id)"])
            return
        }
        let cue = session.cue.map { PlayableClip(id: "cue", source: $0, title: "cue") }
        do {
            let position = try await queue.enqueue(PlayableClip(clip), cue: cue, origin: .timetable(due)).position
            logger.info("\(clip.id): its time \(when) came; queued at position \(position)", metadata: ["clip": "\(clip.id)"])
        } catch {
            logger.warning("\(clip.id) at \(when) dropped: \(error)", metadata: ["clip": "\(clip.id)"])
        }
    }

    /// The wall clock, in whole seconds since the epoch.
    private func wallSeconds() -> Int64 { Int64(wallClock().rounded(.down)) }


    /// Every moment up to this has been dealt with, for the state file.
    public var persistedHandledUntil: Int64 { handledUntil }

    /// Carries on from the state file's mark: a time already queued before a restart is not
    /// queued again, and one that passed while the daemon was down, longer ago than
    /// `atGrace`, is logged as missed. Call before `run()`.
    public func restore(handledUntil saved: Int64) async {
        let now = wallSeconds()
        if saved >= handledUntil {
            handledUntil = saved
            return
        }
        var missed = 0
        for due in due(after: saved, upTo: handledUntil) {
            await play(due.clip, due: due.moment, now: now, missedSoFar: &missed)
        }
        if missed > Self.missesLogged {
            logger.notice("missed \(Plural.count(missed - Self.missesLogged, "more at time")) while jukeboxd was not running; none is played late")
        }
    }

    /// Takes up a reloaded session's clips and times at once.
    public func reload(_ session: Session, clips: [Clip]) {
        self.session = session
        self.clips = clips.filter { $0.enabled && !$0.at.isEmpty }
        nap.wake()
    }
}
