import JukeboxCalendar

/// The plan a date gets, and why.
public struct PlanChoice: Sendable, Equatable {
    public enum Why: Sendable, Equatable, CustomStringConvertible {
        /// Set for that date by hand (`jukebox plan set`): by whom and when, as far as known.
        case byHand(by: String?, at: Int64?)
        /// An event of a calendar, by its summary as the session writes it.
        case calendar(name: String, summary: String)
        /// The `days` rule at this index (from 0).
        case rule(Int)

        public var description: String { words(zone: nil, rules: []) }

        /// In words: `set by hand (pi, 2026-11-28 07:40)`, `calendar school: Late start`,
        /// `days rule 1 (mon-fri)`. `zone` gives the local time a plan was set at; `rules`
        /// the session's rules, to say what one takes.
        public func words(zone: (any LocalZone)?, rules: [DayPlans.Rule]) -> String {
            switch self {
            case .byHand(let by, let at):
                var details: [String] = []
                if let by { details.append(by) }
                if let at, let zone {
                    let local = zone.localTime(at: at)
                    details.append("\(local.date) \(TimeOfDay(minuteOfDay: local.secondOfDay / 60)!)")
                }
                return details.isEmpty ? "set by hand" : "set by hand (\(details.joined(separator: ", ")))"
            case .calendar(let name, let summary):
                return "calendar \(name): \(summary)"
            case .rule(let index):
                return "days rule \(index + 1)" + (index < rules.count ? " (\(rules[index].summary))" : "")
            }
        }
    }

    public var plan: String
    public var why: Why

    public init(plan: String, why: Why) {
        self.plan = plan
        self.why = why
    }
}

/// The dates a calendar's events cover, each with the summaries (their keys) covering it.
public struct CalendarDates: Sendable, Equatable {
    public var summaries: [CivilDate: Set<String>]

    public init(summaries: [CivilDate: Set<String>] = [:]) { self.summaries = summaries }

    /// The longest an event is taken to last: a year's event covers no more.
    static let longestEvent = 400

    /// What `occurrences` cover, read in `zone`: an all-day event its dates (DTSTART up to
    /// DTEND), a timed one every local date it overlaps (one that ends at midnight does not
    /// cover the next date), a floating one the dates of its clock readings.
    public init(_ occurrences: [ICalendar.Occurrence], zone: any LocalZone) {
        var summaries: [CivilDate: Set<String>] = [:]
        for occurrence in occurrences {
            let key = ICalendar.key(occurrence.summary)
            let (first, last): (Int, Int)
            switch occurrence.span {
            case .days(let start, let count):
                (first, last) = (start, start + max(count, 1) - 1)
            case .moments(let start, let end):
                (first, last) = (zone.localTime(at: start).date.daysSinceEpoch, zone.localTime(at: max(start, end - 1)).date.daysSinceEpoch)
            case .floating(let start, let end):
                func day(_ seconds: Int64) -> Int { Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400) }
                (first, last) = (day(start), day(max(start, end - 1)))
            }
            for day in first...min(last, first + Self.longestEvent) {
                summaries[CivilDate(daysSinceEpoch: day), default: []].insert(key)
            }
        }
        self.summaries = summaries
    }
}

/// Which plan each date gets, highest first: a plan set by hand for it, the calendars in the
/// order listed (the summary listed first in a calendar's `plans` wins among its events),
/// the `days` rules (the first that takes the date), and otherwise none.
public struct DayPlanner: Sendable {
    public let plans: DayPlans
    public var byHand: [CivilDate: DayPlans.ByHand]
    /// What each calendar covers, by its name; a calendar not read yet has none.
    public var calendars: [String: CalendarDates]
    let holidays: [DateRule]
    /// Each RRULE rule's dates in `window`, by the rule's index.
    private var ruleDates: [Int: Set<Int>] = [:]
    private var window: ClosedRange<Int>

    /// How far either side of `around` the RRULE rules are worked out at once.
    public static let ruleWindow = (before: 7, after: 400)

    public init(plans: DayPlans, byHand: [CivilDate: DayPlans.ByHand] = [:], calendars: [String: CalendarDates] = [:], holidays: [DateRule] = [], around: CivilDate) {
        self.plans = plans
        self.byHand = byHand
        self.calendars = calendars
        self.holidays = holidays
        let day = around.daysSinceEpoch
        window = (day - Self.ruleWindow.before)...(day + Self.ruleWindow.after)
        for (index, rule) in plans.rules.enumerated() {
            guard let recurrence = rule.recurrence else { continue }
            ruleDates[index] = Set(ICalendar.ruleDates(recurrence.rule, start: recurrence.from.daysSinceEpoch, from: window.lowerBound, through: window.upperBound))
        }
    }

    /// The plan `date` gets, and why; nil: no plan, and no plan times that day.
    public func choice(for date: CivilDate) -> PlanChoice? {
        if let set = byHand[date] { return PlanChoice(plan: set.plan, why: .byHand(by: set.by, at: set.at)) }
        for calendar in plans.calendars {
            guard let covering = calendars[calendar.name]?.summaries[date] else { continue }
            if let first = calendar.plans.first(where: { covering.contains($0.summary) }) {
                return PlanChoice(plan: first.plan, why: .calendar(name: calendar.name, summary: first.title))
            }
        }
        for (index, rule) in plans.rules.enumerated() where takes(rule, at: index, date) {
            return PlanChoice(plan: rule.plan, why: .rule(index))
        }
        return nil
    }

    private func takes(_ rule: DayPlans.Rule, at index: Int, _ date: CivilDate) -> Bool {
        guard rule.days?.contains(date.weekday) ?? true, rule.filter.allows(date, holidays: holidays) else { return false }
        guard let recurrence = rule.recurrence else { return true }
        let day = date.daysSinceEpoch
        if window.contains(day) { return ruleDates[index]?.contains(day) ?? false }
        return ICalendar.ruleDates(recurrence.rule, start: recurrence.from.daysSinceEpoch, from: day, through: day) == [day]
    }
}

extension DayPlans.Rule {
    /// What the rule takes, in a few words: `mon-fri`, `12-24..01-06`, `FREQ=MONTHLY;BYDAY=1WE`,
    /// `every day`.
    public var summary: String {
        var parts: [String] = []
        if let days { parts.append(Weekday.describe(days)) }
        if !filter.dates.isEmpty { parts.append(filter.dates.map(\.description).joined(separator: ", ")) }
        if !filter.except.isEmpty { parts.append("except " + filter.except.map(\.description).joined(separator: ", ")) }
        if let recurrence { parts.append(recurrence.rule) }
        return parts.isEmpty ? "every day" : parts.joined(separator: "; ")
    }
}
