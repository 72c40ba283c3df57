import Logging
import ServiceLifecycle

/// Queues clips at their `at` times. Each moment is worked out from the wall clock and the
/// local zone (`FixedTime.next`), so daylight-saving gaps and repeated hours follow the
/// rules there. It never sleeps longer than a minute at a time, so a clock that is set (a
/// Pi without a battery-backed clock, set by NTP after boot) or a new zone is seen soon.
///
/// A moment that passed more than `atGrace` ago (the daemon was down, the clock jumped) is
/// not played late: it is missed, in the log (a warning), the history and the events. With
/// the session's `missed: play-late` it plays late instead, up to `playLateWithin` after its
/// time, once for each clip however many of its moments passed. A moment skipped for quiet
/// is in the history and the events too, as skipped. The moments it has dealt with only move
/// forwards, so a clock set back never plays a time twice.
public actor ClipTimetable: Service {
    /// The schedule in force, read at each use.
    let schedule: ScheduleBoard
    var session: Session { schedule.current.session }
    /// The clips with `at` times, from the schedule.
    private var clips: [Clip]
    private let queue: ClipPlayQueue
    /// Says when a time is skipped.
    private let quiet: QuietHours
    let time: TimeSource
    private let clock: ElapsedClock
    private let logger: Logger
    /// Every moment at or before this has been queued or reported missed.
    private var handledUntil: Int64
    /// The next moment due, and its clip, for `status` and `jukebox next`.
    public private(set) var next: (moment: Int64, clipID: String)?
    let nap = WakeableSleep()

    /// Each clip's each time's next moment, as last worked out: kept until that moment
    /// passes, the clock goes back, the zone's rules change, or a reload. Without it every
    /// look (each minute, and each `jukebox next`) worked every time out again, up to 400
    /// days ahead for one whose dates never come: 100 clips of 100 such times took 16 % of a
    /// core while idle, and `next` 5.6 s.
    private var upcomingMoments: [[Upcoming?]] = []
    /// When the moments were worked out, and the zone's offsets then and half a year on.
    private var zoneMark: (at: Int64, offsets: [Int])?

    /// Day plans: which plan each date gets (nil: the session has none), plans set by hand,
    /// what the calendars cover, and each date's plan times as worked out (kept until one
    /// of these, the session or the zone's rules change).
    var planner: DayPlanner?
    var byHand: [CivilDate: DayPlans.ByHand] = [:]
    var calendarDates: [String: CalendarDates] = [:]
    var planTimes: [CivilDate: [PlannedTime]] = [:]
    var planZoneMark: (at: Int64, offsets: [Int])?
    /// Told when the plans change by themselves: a calendar, a reload, a new day.
    var plansChanged: (@Sendable () -> Void)?
    /// The local date the loop last looked on, to tell a new day.
    var lastDate: CivilDate?

    private struct Upcoming {
        /// Worked out as the first moment after this.
        var from: Int64
        /// nil: none within the horizon looked at (400 days), looked at again a day later.
        var moment: Int64?

        func answers(after: Int64) -> Bool {
            guard after >= from else { return false }
            if let moment { return after < moment }
            return after < from + 86_400
        }
    }


    public init(
        schedule: ScheduleBoard, queue: ClipPlayQueue, quiet: QuietHours, time: TimeSource, logger: Logger
    ) {
        self.schedule = schedule
        self.clips = Self.timed(schedule.current.clips)
        self.queue = queue
        self.quiet = quiet
        self.time = time
        self.clock = ElapsedClock(time.clock)
        self.logger = logger
        // A time within the grace before start-up still plays: a restart is a short outage.
        handledUntil = time.wallSeconds() - schedule.current.session.atGrace.components.seconds
        planner = schedule.current.session.dayPlans.map { DayPlanner(plans: $0, holidays: schedule.current.session.holidays, around: time.zone.localTime(at: time.wallSeconds()).date) }
        schedule.follow { [weak self] _ in await self?.scheduleChanged() }
    }

    private static func timed(_ clips: [Clip]) -> [Clip] { clips.filter { $0.enabled && !$0.at.isEmpty } }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.keepTime() }
        } catch is CancellationError {
            // Shutdown while waiting for the next time.
        }
    }

    private func keepTime() async throws {
        while true {
            let now = time.wallSeconds()
            if now > handledUntil {
                var missed = 0
                let dueNow = due(after: handledUntil, upTo: now)
                let last = Self.lastIndices(dueNow)
                for (index, due) in dueNow.enumerated() {
                    // Marked handled first: the state saved when it is queued says so.
                    handledUntil = max(handledUntil, due.moment)
                    await play(due.clip, due: due.moment, now: now, missedSoFar: &missed, again: last[due.clip.id]! > index)
                }
                if missed > Self.missesLogged {
                    await queue.countMissed(missed - Self.missesLogged)
                    logger.notice("missed \(Plural.count(missed - Self.missesLogged, "more at time")) the clock passed over; none is played late")
                }
            }
            handledUntil = max(handledUntil, now)
            if planner != nil {
                let today = time.zone.localTime(at: now).date
                if let lastDate, lastDate != today { plansChanged?() }
                lastDate = today
            }
            next = upcoming(after: handledUntil).map { ($0.moment, $0.clip.id) }
            // With no times to keep it sleeps until a reload brings some: an idle daemon wakes
            // for nothing.
            let timed = !clips.isEmpty || planner != nil
            if timed, let moment = next?.moment, moment - now <= WallTime.longestNap {
                // To the moment itself rather than to whole seconds of waiting, which would
                // wake up to a second late: a time is heard on its second.
                let left = (Double(moment) - time.wallClock()) * 1000
                try await nap.sleep(for: .milliseconds(max(Int64(left.rounded(.up)), 1)), on: clock)
            } else {
                try await nap.sleep(for: .seconds(timed ? WallTime.longestNap : WallTime.untilWoken), on: clock)
            }
        }
    }

    /// Misses logged one by one when the clock passes over many times at once (set forward
    /// by days); the rest are counted in one line.
    static let missesLogged = 10

    /// Every moment in `after…upTo` of every clip's `at` times, earliest first; clips due at
    /// the same moment in the session's order. At most a day of one time's moments is
    /// listed: the clock set forward by longer passes over the rest, which were missed anyway.
    /// A clip with several times at one moment (the clocks skipped the hour they were in) is
    /// listed once for it.
    private func due(after: Int64, upTo now: Int64, lookingBack: Int64 = 86_400) -> [(moment: Int64, clip: Clip)] {
        checkZone(at: now)
        var found: [(moment: Int64, order: Int, clip: Clip)] = []
        for (order, clip) in clips.enumerated() {
            var moments = Set<Int64>()
            for index in clip.at.indices {
                var from = max(after, now - lookingBack)
                while let moment = nextMoment(clip: order, time: index, after: from), moment <= now {
                    if moments.insert(moment).inserted { found.append((moment, order, clip)) }
                    from = moment
                }
            }
        }
        var seen = Set<String>()
        for (offset, planned) in plannedTimes(after: max(after, now - lookingBack), through: now).enumerated()
        where seen.insert("\(planned.moment) \(planned.clip.id)").inserted {
            found.append((planned.moment, clips.count + offset, planned.clip))
        }
        return found.sorted { ($0.moment, $0.order) < ($1.moment, $1.order) }.map { ($0.moment, $0.clip) }
    }

    /// The first moment after `after` of time `time` of clip `clip` (indices into `clips`),
    /// from what was worked out before when that still answers.
    private func nextMoment(clip: Int, time: Int, after: Int64) -> Int64? {
        if let known = upcomingMoments[clip][time], known.answers(after: after) { return known.moment }
        let moment = clips[clip].at[time].next(after: after, zone: self.time.zone, location: session.location, holidays: session.holidays)
        upcomingMoments[clip][time] = Upcoming(from: after, moment: moment)
        return moment
    }

    /// Forgets every moment worked out when the clips changed, or the zone's rules did (a new
    /// zone, or new rules for it): seen as other offsets at the two moments marked when they
    /// were worked out. Called once before each look at the times.
    private func checkZone(at moment: Int64) {
        if let mark = zoneMark, upcomingMoments.count == clips.count,
           [time.zone.utcOffset(at: mark.at), time.zone.utcOffset(at: mark.at + 182 * 86_400)] == mark.offsets { return }
        upcomingMoments = clips.map { Array(repeating: nil, count: $0.at.count) }
        planTimes = [:]
        zoneMark = (moment, [time.zone.utcOffset(at: moment), time.zone.utcOffset(at: moment + 182 * 86_400)])
    }

    /// The next `limit` moments of every clip's `at` times, within `horizon` seconds of now,
    /// earliest first; for `jukebox next`.
    public func plan(limit: Int, horizon: Int64) -> [(moment: Int64, clip: Clip, plan: String?)] {
        let now = time.wallSeconds()
        let after = max(handledUntil, now)
        checkZone(at: now)
        // Each time's next moment (as worked out before), then, as the earliest is taken, the
        // one after it: each time is worked out once, plus once for each moment listed.
        var heads: [(moment: Int64, clip: Int, time: Int)] = []
        for clip in clips.indices {
            for time in clips[clip].at.indices {
                if let moment = nextMoment(clip: clip, time: time, after: after), moment <= now + horizon { heads.append((moment, clip, time)) }
            }
        }
        var found: [(moment: Int64, clip: Int)] = []
        while found.count < limit, let earliest = heads.indices.min(by: { (heads[$0].moment, heads[$0].clip) < (heads[$1].moment, heads[$1].clip) }) {
            let head = heads[earliest]
            // A clip at one moment once, whichever of its times brought it.
            if !found.contains(where: { $0 == (head.moment, head.clip) }) { found.append((head.moment, head.clip)) }
            let time = clips[head.clip].at[head.time]
            if let moment = time.next(after: head.moment, zone: self.time.zone, location: session.location, holidays: session.holidays), moment <= now + horizon {
                heads[earliest].moment = moment
            } else {
                heads.remove(at: earliest)
            }
        }
        // Plan times as well, and the earliest `limit` of both.
        let planned = plannedTimes(after: after, through: now + horizon, limit: limit)
        let both: [(moment: Int64, clip: Clip, plan: String?)] = found.map { ($0.moment, clips[$0.clip], nil) } + planned.map { ($0.moment, $0.clip, $0.plan) }
        return Array(both.enumerated().sorted { ($0.element.moment, $0.offset) < ($1.element.moment, $1.offset) }.map(\.element).prefix(limit))
    }

    /// The earliest moment after `after` of any clip's `at` times.
    private func upcoming(after: Int64) -> (moment: Int64, clip: Clip)? {
        checkZone(at: after)
        var best: (moment: Int64, clip: Clip)?
        for clip in clips.indices {
            for time in clips[clip].at.indices {
                guard let moment = nextMoment(clip: clip, time: time, after: after) else { continue }
                if best.map({ moment < $0.moment }) ?? true { best = (moment, clips[clip]) }
            }
        }
        if let planned = plannedTimes(after: after, through: after + WallTime.planLookAhead, limit: 1).first, best.map({ planned.moment < $0.moment }) ?? true {
            best = (planned.moment, planned.clip)
        }
        return best
    }

    /// Each clip's last place in `list`: one due at an earlier place is due again later in it.
    /// (A week of an hourly time for many clips is thousands of moments, so looked up, not
    /// searched for each.)
    static func lastIndices(_ list: [(moment: Int64, clip: Clip)]) -> [String: Int] {
        Dictionary(list.enumerated().map { ($0.element.clip.id, $0.offset) }, uniquingKeysWith: max)
    }

    /// Queues `clip` for its moment `due`, or, too late or quiet then, tells why not. `again`:
    /// the clip is due again later in the same look, so this moment is not played late.
    private func play(_ clip: Clip, due: Int64, now: Int64, missedSoFar missed: inout Int, again: Bool = false) async {
        let reading = time.zone.localTime(at: due)
        let when = "\(reading.date) \(TimeOfDay(minuteOfDay: reading.secondOfDay / 60)!)"
        let late = now - due
        // An alert on: held back by it, not missed, and not played after it.
        if let alert = await queue.alert?.name {
            logger.info("held back \(clip.id) at \(when): the \(alert) alert is on", metadata: ["clip": "\(clip.id)", "alert": "\(alert)"])
            await queue.recordNotPlayed(PlayableClip(clip), due: due, outcome: .heldBack(reason: "\(alert) alert"))
            return
        }
        // Quiet then: skipped, whenever it is looked at; not missed.
        if await quiet.isQuiet(at: due) {
            logger.info("skipped \(clip.id) at \(when): quiet; it is not saved up for afterwards", metadata: ["clip": "\(clip.id)"])
            await queue.recordNotPlayed(PlayableClip(clip), due: due, outcome: .notPlayed(reason: "quiet at its time; it is not saved up for afterwards"))
            return
        }
        let grace = session.grace
        let playsLate = grace.startsLate(late: .seconds(late))
        guard !grace.isMissed(late: .seconds(late)), !(playsLate && again) else {
            missed += 1
            // Beyond the first few (the clock set forward by days) they are counted only, all
            // at once by the caller.
            guard missed <= Self.missesLogged else { return }
            let reason = playsLate && again && !grace.isMissed(late: .seconds(late))
                ? "it was due \(DurationText.format(.seconds(late))) ago, and a later time of it is played late instead"
                : "it was due \(DurationText.format(.seconds(late))) ago (jukeboxd was not running, or the clock jumped), longer than \(grace.words); not played late"
            logger.warning("missed \(clip.id) at \(when): \(reason)", metadata: ["clip": "\(clip.id)"])
            await queue.recordNotPlayed(PlayableClip(clip), due: due, outcome: .missed(reason: reason))
            return
        }
        if playsLate {
            logger.notice("\(clip.id) at \(when) is \(DurationText.format(.seconds(late))) late; it plays now (missed: play-late)", metadata: ["clip": "\(clip.id)"])
        }
        let cue = session.cue.map { PlayableClip(id: "cue", source: $0, title: "cue") }
        do {
            let urgent = clip.priority == .now
            let position = try await queue.enqueue(PlayableClip(clip), cue: cue, origin: .fixedTime(due), urgent: urgent).position
            logger.info("\(clip.id): its time \(when) came; queued at position \(position)\(urgent ? ", cutting in" : "")", metadata: ["clip": "\(clip.id)"])
        } catch {
            logger.warning("\(clip.id) at \(when) dropped: \(error)", metadata: ["clip": "\(clip.id)"])
        }
    }



    /// Every moment up to this has been dealt with, for the state file.
    public var persistedHandledUntil: Int64 { handledUntil }

    /// How far back a start looks for times that passed while the daemon was stopped.
    public static let lookingBackAtStart: Int64 = 7 * 86_400

    /// Carries on from the state file's mark: a time already queued before a restart is not
    /// queued again, and one that passed while the daemon was down (up to a week before),
    /// longer ago than `atGrace`, is missed, or played late (`missed: play-late`). Call
    /// before `run()`.
    public func restore(handledUntil saved: Int64) async {
        let now = time.wallSeconds()
        if saved >= handledUntil {
            handledUntil = saved
            return
        }
        var missed = 0
        let passed = due(after: saved, upTo: handledUntil, lookingBack: Self.lookingBackAtStart)
        let last = Self.lastIndices(passed)
        for (index, due) in passed.enumerated() {
            await play(due.clip, due: due.moment, now: now, missedSoFar: &missed, again: last[due.clip.id]! > index)
        }
        if missed > Self.missesLogged {
            await queue.countMissed(missed - Self.missesLogged)
            logger.notice("missed \(Plural.count(missed - Self.missesLogged, "more at time")) while jukeboxd was not running; none is played late")
        }
    }

    /// Takes up a new schedule's clips and times at once.
    private func scheduleChanged() {
        clips = Self.timed(schedule.current.clips)
        zoneMark = nil
        rebuildPlanner()
        nap.wake()
    }

    /// Wakes the loop to look at the times again (a plan changed).
    func timesChanged() {
        planTimes = [:]
        nap.wake()
    }
}
