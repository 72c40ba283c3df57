/// One time of a date's plan: its moment and clip (urgent as the plan's entry says).
struct PlannedTime: Sendable {
    var moment: Int64
    var clip: Clip
    var plan: String
}

// Day plans in the timetable: each date's plan times, worked out once and kept until the
// session, a plan set by hand, a calendar or the zone's rules change. They play as `at` times
// do, with the same mark of what has been dealt with.
extension ClipTimetable {
    /// The plan times after `after` and up to `through`, earliest first; at most `limit` dates'
    /// worth past the first `limit` found.
    func plannedTimes(after: Int64, through: Int64, limit: Int = .max) -> [PlannedTime] {
        guard planner != nil, through > after else { return [] }
        checkPlanCache(at: after)
        let zone = time.zone
        // A sun time with an offset can fall on the day before or after its date.
        let first = zone.localTime(at: after).date.adding(days: -1)
        let last = zone.localTime(at: through).date.adding(days: 1)
        var found: [PlannedTime] = []
        var date = first
        while date <= last {
            for planned in times(on: date) where planned.moment > after && planned.moment <= through {
                found.append(planned)
            }
            // The day after a date whose times are found can still hold an earlier one (a sun
            // time the day before): one more date is looked at.
            if found.count >= limit, date > zone.localTime(at: found.map(\.moment).min()!).date { break }
            date = date.adding(days: 1)
        }
        return found.sorted { $0.moment < $1.moment }
    }

    /// `date`'s plan times, from the cache or worked out now.
    func times(on date: CivilDate) -> [PlannedTime] {
        if let known = planTimes[date] { return known }
        var times: [PlannedTime] = []
        if let planner, let choice = planner.choice(for: date), let entries = planner.plans.entries(of: choice.plan) {
            let session = self.session
            for entry in entries {
                guard var clip = session.clip(id: entry.clipID), clip.enabled else { continue }
                clip.priority = entry.urgent ? .now : .normal
                for moment in entry.time.moments(on: date, zone: time.zone, location: session.location, holidays: session.holidays) {
                    times.append(PlannedTime(moment: moment, clip: clip, plan: choice.plan))
                }
            }
            times.sort { $0.moment < $1.moment }
        }
        if planTimes.count > 1000 { planTimes = [:] }
        planTimes[date] = times
        return times
    }

    /// Clears the kept plan times when the zone's rules changed since (as `checkZone` does for
    /// `at` times).
    private func checkPlanCache(at moment: Int64) {
        if let mark = planZoneMark, [time.zone.utcOffset(at: mark.at), time.zone.utcOffset(at: mark.at + 182 * 86_400)] == mark.offsets { return }
        planTimes = [:]
        planZoneMark = (moment, [time.zone.utcOffset(at: moment), time.zone.utcOffset(at: moment + 182 * 86_400)])
    }

    /// Makes the planner again from the session, the plans set by hand and the calendars.
    func rebuildPlanner() {
        planTimes = [:]
        guard let plans = session.dayPlans else {
            planner = nil
            return
        }
        // Plans set by hand for plans the session no longer has are let go.
        let names = Set(plans.planNames)
        byHand = byHand.filter { names.contains($0.value.plan) }
        calendarDates = calendarDates.filter { name, _ in plans.calendars.contains { $0.name == name } }
        planner = DayPlanner(
            plans: plans, byHand: byHand, calendars: calendarDates, holidays: session.holidays,
            around: time.zone.localTime(at: time.wallSeconds()).date)
        plansChanged?()
    }

    // MARK: - What front ends see and set

    /// The plan each of `count` dates from `from` gets, and why; empty without plans.
    public func days(from: CivilDate, count: Int) -> [(date: CivilDate, choice: PlanChoice?)] {
        guard let planner else { return [] }
        return (0..<count).map { offset in
            let date = from.adding(days: offset)
            return (date, planner.choice(for: date))
        }
    }

    /// The times of `date`'s plan, earliest first, with their clips.
    public func plannedTimes(on date: CivilDate) -> [(moment: Int64, clipID: String, urgent: Bool)] {
        times(on: date).map { ($0.moment, $0.clip.id, $0.clip.priority == .now) }
    }

    /// Sets `date`'s plan by hand (nil: back to what the calendars and rules say); `by`: who.
    public func setPlan(_ plan: String?, on date: CivilDate, by: String? = nil) {
        byHand[date] = plan.map { DayPlans.ByHand(plan: $0, by: by, at: time.wallSeconds()) }
        planner?.byHand = byHand
        timesChanged()
    }

    /// A calendar was read again: what it covers now.
    public func calendarChanged(_ name: String, dates: CalendarDates) {
        let changed = calendarDates[name] != dates
        calendarDates[name] = dates
        planner?.calendars = calendarDates
        timesChanged()
        if changed { plansChanged?() }
    }

    /// `tell` is called when the plans change by themselves (a calendar, a reload, a new day).
    public func setPlansChanged(_ tell: @escaping @Sendable () -> Void) { plansChanged = tell }

    /// The plans set by hand, for the state file: those for dates within a week ago or later.
    public var persistedPlans: [String: DayPlans.ByHand] {
        let today = time.zone.localTime(at: time.wallSeconds()).date
        return Dictionary(uniqueKeysWithValues: byHand.filter { $0.key >= today.adding(days: -7) }.map { ($0.key.description, $0.value) })
    }

    /// Takes up the plans set by hand from the state file (those the session still has).
    public func restorePlans(_ saved: [String: DayPlans.ByHand]) {
        for (text, set) in saved {
            if case .success(.dates(let range)) = DateRule.parse(text, allowHolidays: false), range.lowerBound == range.upperBound {
                byHand[range.lowerBound] = set
            }
        }
        rebuildPlanner()
        nap.wake()
    }
}
