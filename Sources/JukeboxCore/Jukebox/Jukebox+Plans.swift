/// A date's plan: which, why, and its times.
public struct DayPlan: Sendable, Equatable {
    public struct Time: Sendable, Equatable {
        public var moment: Int64
        /// The moment on the local clock, `HH:MM`.
        public var clock: String
        public var clipID: String
        public var urgent: Bool
    }

    public var date: CivilDate
    public var choice: PlanChoice?
    /// Why, in words: `calendar school: Late start`, `days rule 1 (mon-fri)`, `set by hand (pi,
    /// 2026-11-28 07:40)`, or `no rule matches`.
    public var why: String
    public var times: [Time]
}

// Day plans as front ends see them: the coming days' plans, and a plan set by hand.
extension Jukebox {
    /// At most this many days are listed at once.
    public static let planDaysRange = 1...62
    /// A plan may be set by hand up to this many days ahead.
    public static let planDaysAhead = 400

    public var hasPlans: Bool { schedule.current.session.dayPlans != nil }
    /// The session's plans' names, in its order.
    public var planNames: [String] { schedule.current.session.dayPlans?.planNames ?? [] }

    public static let noPlans = JukeboxError.invalidParameter(
        "the session has no day plans: add \"plans\" and \"days\" (see docs/plans.md)")

    /// The session's calendars as last read.
    public func calendarStates() async -> [CalendarFeeds.State] { await calendars.states }

    /// Today's date where jukeboxd is.
    public var today: CivilDate { configuration.time.zone.localTime(at: configuration.time.wallSeconds()).date }

    /// The plans of `count` days from `from` (today when nil), with their times.
    public func planDays(from: CivilDate?, count: Int) async throws(JukeboxError) -> [DayPlan] {
        guard hasPlans else { throw Self.noPlans }
        guard Self.planDaysRange.contains(count) else {
            throw .invalidParameter("days must be from \(Self.planDaysRange.lowerBound) to \(Self.planDaysRange.upperBound), not \(count)")
        }
        let first = from ?? today
        var days: [DayPlan] = []
        let rules = schedule.current.session.dayPlans?.rules ?? []
        for (date, choice) in await timetable.days(from: first, count: count) {
            let zone = configuration.time.zone
            let times = await timetable.plannedTimes(on: date).map { time in
                DayPlan.Time(
                    moment: time.moment, clock: TimeOfDay(minuteOfDay: zone.localTime(at: time.moment).secondOfDay / 60)!.description,
                    clipID: time.clipID, urgent: time.urgent)
            }
            let why = choice?.why.words(zone: configuration.time.zone, rules: rules) ?? "no rule matches"
            days.append(DayPlan(date: date, choice: choice, why: why, times: times))
        }
        return days
    }

    /// Sets `date`'s plan by hand (nil: back to what the calendars and rules say): saved
    /// before it is answered. Refused for a plan the session does not have, a date in the
    /// past, or one more than `planDaysAhead` days ahead.
    public func setPlan(_ plan: String?, on date: CivilDate, by who: String? = nil) async throws(JukeboxError) -> Acknowledged<DayPlan> {
        guard hasPlans else { throw Self.noPlans }
        if let plan, !planNames.contains(plan) {
            throw .invalidParameter("\"\(plan.prefix(60))\" is not one of the session's plans (\(planNames.joined(separator: ", ")))")
        }
        let today = self.today
        guard date >= today else { throw .invalidParameter("\(date) is in the past; a plan is set for today or a later date") }
        guard date <= today.adding(days: Self.planDaysAhead) else {
            throw .invalidParameter("\(date) is more than \(Self.planDaysAhead) days ahead; set it nearer the time")
        }
        await timetable.setPlan(plan, on: date, by: who)
        events.publish(.plans(byHand: true))
        let by = who.map { " by \($0)" } ?? ""
        logger.notice(plan.map { "the plan for \(date) is set to \"\($0)\" by hand\(by)" } ?? "the plan for \(date) set by hand is cleared\(by)")
        let day = try await planDays(from: date, count: 1)[0]
        return await acknowledge(day, .setPlan)
    }
}
