/// Bell schedules by the day (`plans`, `days`, `calendars`): named lists of times, and what
/// chooses one for each date, highest first: a plan set by hand for that date, the calendars
/// in the order listed, the `days` rules, and otherwise none.
public struct DayPlans: Sendable, Equatable {
    /// One time of a plan: the clip queued at it, as a clip's own `at` time is.
    public struct Entry: Sendable, Equatable {
        public var time: FixedTime
        public var clipID: String
        /// `"priority": "now"`: it cuts in at its time.
        public var urgent: Bool

        public init(time: FixedTime, clipID: String, urgent: Bool = false) {
            self.time = time
            self.clipID = clipID
            self.urgent = urgent
        }
    }

    /// A `days` rule: the first that takes a date gives it its plan.
    public struct Rule: Sendable, Equatable {
        public var plan: String
        /// The weekdays it takes (`days`); nil: every day.
        public var days: Set<Weekday>?
        /// `dates` and `except`.
        public var filter: DateFilter
        /// An RFC 5545 RRULE counted from `from`: it takes only the dates the rule gives.
        public var recurrence: Recurrence?

        public init(plan: String, days: Set<Weekday>? = nil, filter: DateFilter = .always, recurrence: Recurrence? = nil) {
            self.plan = plan
            self.days = days
            self.filter = filter
            self.recurrence = recurrence
        }
    }

    public struct Recurrence: Sendable, Equatable {
        public var rule: String
        public var from: CivilDate

        public init(rule: String, from: CivilDate) {
            self.rule = rule
            self.from = from
        }
    }

    /// A calendar whose events choose plans: an event's SUMMARY (trimmed, in any case) names
    /// a plan through `plans`; events whose summary maps to nothing are left alone.
    public struct Calendar: Sendable, Equatable {
        public enum Source: Sendable, Equatable, CustomStringConvertible {
            /// An absolute path.
            case file(String)
            /// An `http://` or `https://` address.
            case web(String)

            public var description: String {
                switch self {
                case .file(let path): path
                case .web(let address): address
                }
            }
        }

        public var name: String
        public var source: Source
        public var refresh: Duration
        /// Summaries (lowercased and trimmed) and their plans, in the order listed: when
        /// several events cover one date, the one listed first wins. `title`: the summary as
        /// the session writes it, for saying why.
        public var plans: [(summary: String, plan: String, title: String)]

        public init(name: String, source: Source, refresh: Duration = Calendar.defaultRefresh, plans: [(summary: String, plan: String, title: String)]) {
            self.name = name
            self.source = source
            self.refresh = refresh
            self.plans = plans
        }

        public static func == (lhs: Calendar, rhs: Calendar) -> Bool {
            lhs.name == rhs.name && lhs.source == rhs.source && lhs.refresh == rhs.refresh
                && lhs.plans.map(\.summary) == rhs.plans.map(\.summary) && lhs.plans.map(\.plan) == rhs.plans.map(\.plan)
                && lhs.plans.map(\.title) == rhs.plans.map(\.title)
        }

        /// A summary as calendars are matched by it: trimmed, in lower case.
        public static func key(_ summary: String) -> String { summary.trimmingSpaces.lowercased() }

        public static let defaultRefresh: Duration = .seconds(6 * 3600)
        /// How often a calendar may be read again at most.
        public static let shortestRefresh: Duration = .seconds(300)
        /// A calendar's name: a file name too (its last good copy).
        public static let maxNameLength = 64
        /// At most this many summaries a calendar maps.
        public static let maxSummaries = 50
    }

    /// The plans by name, in the order the session lists them.
    public var plans: [(name: String, entries: [Entry])]
    public var rules: [Rule]
    public var calendars: [Calendar]

    public init(plans: [(name: String, entries: [Entry])], rules: [Rule] = [], calendars: [Calendar] = []) {
        self.plans = plans
        self.rules = rules
        self.calendars = calendars
    }

    public static func == (lhs: DayPlans, rhs: DayPlans) -> Bool {
        lhs.plans.map(\.name) == rhs.plans.map(\.name) && lhs.plans.map(\.entries) == rhs.plans.map(\.entries)
            && lhs.rules == rhs.rules && lhs.calendars == rhs.calendars
    }

    public var planNames: [String] { plans.map(\.name) }

    /// A plan set by hand for a date: which, who set it and when (seconds since the epoch).
    public struct ByHand: Sendable, Equatable, Codable {
        public var plan: String
        public var by: String?
        public var at: Int64?

        public init(plan: String, by: String? = nil, at: Int64? = nil) {
            self.plan = plan
            self.by = by
            self.at = at
        }
    }

    public func entries(of plan: String) -> [Entry]? { plans.first { $0.name == plan }?.entries }

    /// At most this many plans, times in one plan, `days` rules and calendars.
    public static let maxPlans = 50
    public static let maxEntries = 200
    public static let maxRules = 100
    public static let maxCalendars = 8
    /// A plan's name: letters, digits, `-` and `_`, as the CLI and Home Assistant show it.
    public static let maxPlanNameLength = 40
}
