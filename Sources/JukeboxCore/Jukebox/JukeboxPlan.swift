/// What will happen, as `jukebox next`, the page and Home Assistant's "next play" show it:
/// the next fixed-time plays, the next random pick and whether active hours allow it, quiet
/// and the next quiet hours, and today's sun times.
public struct JukeboxPlan: Sendable {
    /// A clip due at one of its `at` times.
    public struct FixedTimePlay: Sendable, Equatable {
        /// Seconds since the epoch.
        public var moment: Int64
        public var clip: Clip
        /// It falls in quiet (as things stand now), so it will be skipped.
        public var quiet: Bool
        /// The day plan it is a time of; nil: the clip's own `at` time.
        public var plan: String?
    }

    public var fixedTimes: [FixedTimePlay]
    /// When the scheduler picks next, in seconds since the epoch; nil while picks are held back.
    public var nextPick: Double?
    /// The next pick falls outside active hours or in quiet (as things stand), so nothing
    /// will be picked then.
    public var pickSkipped: Bool { pickSkippedFor != nil }
    /// Why the next pick will not play: outside active hours (`.activeHours`), or quiet then.
    public var pickSkippedFor: PickSkip?

    public enum PickSkip: String, Sendable {
        case quiet
        case activeHours = "active hours"
    }
    /// The session's active hours: whether they are open now, and when that changes (nil:
    /// not within a week). nil when the session has none (picks at any time).
    public var activeHours: (open: Bool, until: Int64?)?
    public var quiet: QuietHours.Status
    /// The quiet hours in force now (from when they began) or next, within a week.
    public var quietHours: (from: Int64, to: Int64?)?
    /// Where sun times are worked out, and today's, on the local clock.
    public var location: GeoLocation?
    public var sun: [(event: SunEvent, time: String)]

    /// When something next plays by itself: the earliest fixed time that is not skipped for
    /// quiet, or the next pick while active hours are open and it is not quiet. For Home
    /// Assistant's "next play" sensor.
    public var nextPlay: Double? {
        let fixed = fixedTimes.first { !$0.quiet }.map { Double($0.moment) }
        let pick = pickSkipped ? nil : nextPick
        return [fixed, pick].compactMap { $0 }.min()
    }
}

extension Jukebox {
    /// The longest list of fixed times `next` gives, and how far ahead it looks.
    public static let planLimitRange = 1...100
    static let planHorizon: Int64 = 7 * 86_400

    /// What will happen next (`jukebox next`): up to `limit` fixed-time plays within a week.
    public func plan(limit: Int = 10) async -> JukeboxPlan {
        let now = configuration.time.wallSeconds()
        let session = schedule.current.session
        let fixed = await timetable.plan(limit: limit, horizon: Self.planHorizon)
        var plays: [JukeboxPlan.FixedTimePlay] = []
        for (moment, clip, plan) in fixed {
            plays.append(.init(moment: moment, clip: clip, quiet: await quiet.isQuiet(at: moment), plan: plan))
        }
        let queueBlock = await queue.pickBlock
        let (zone, location, holidays) = (configuration.time.zone, session.location, session.holidays)
        let active: (open: Bool, until: Int64?)? = session.activeHours.isEmpty ? nil : (
            session.activeHours.hold(now, zone: zone, location: location, holidays: holidays),
            session.activeHours.nextChange(after: now, zone: zone, location: location, holidays: holidays))
        let nextPick = queueBlock == nil ? await scheduler.nextPickWallTime : nil
        var pickSkippedFor: JukeboxPlan.PickSkip?
        if let nextPick {
            let moment = Int64(nextPick.rounded(.down))
            let inActiveHours = session.activeHours.isEmpty || session.activeHours.hold(moment, zone: zone, location: location, holidays: holidays)
            if !inActiveHours {
                pickSkippedFor = .activeHours
            } else if await quiet.isQuiet(at: moment) {
                pickSkippedFor = .quiet
            }
        }
        return JukeboxPlan(
            fixedTimes: plays, nextPick: nextPick, pickSkippedFor: pickSkippedFor, activeHours: active,
            quiet: await quiet.status(at: now), quietHours: await quiet.nextHours(after: now), location: location,
            sun: location.map { SunCalculator.day(zone.localTime(at: now).date, at: $0, zone: zone) } ?? [])
    }
}
