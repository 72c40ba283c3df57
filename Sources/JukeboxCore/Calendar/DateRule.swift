/// Which dates something applies to, as a session writes them in `dates` and `except`:
/// - a single date, `"2026-04-05"`, or a range of them, `"2026-04-01..2026-04-10"`;
/// - a date every year, `"12-25"`, or a yearly range, `"07-15..08-31"`; a yearly range
///   that ends before it starts crosses the new year (`"12-24..01-06"`);
/// - in `except` only, `"holidays"`: the session's own list of holidays.
public enum DateRule: Sendable, Hashable, CustomStringConvertible {
    case dates(ClosedRange<CivilDate>)
    /// Month and day, from and to (inclusive), every year.
    case yearly(from: MonthDay, to: MonthDay)
    /// The session's `holidays`.
    case holidays

    public struct MonthDay: Sendable, Hashable, Comparable, CustomStringConvertible {
        public let month: Int
        public let day: Int

        /// 29 February is allowed; in other years it is 1 March's eve, never matched.
        public init?(month: Int, day: Int) {
            guard CivilDate(year: 2000, month: month, day: day) != nil else { return nil }
            self.month = month
            self.day = day
        }

        init(_ date: CivilDate) {
            month = date.month
            day = date.day
        }

        public static func < (lhs: MonthDay, rhs: MonthDay) -> Bool { (lhs.month, lhs.day) < (rhs.month, rhs.day) }

        public var description: String { (month < 10 ? "0" : "") + "\(month)-" + (day < 10 ? "0" : "") + "\(day)" }
    }

    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Reads `text`; `holidays` is accepted only where `allowHolidays` (in `except`).
    public static func parse(_ text: String, allowHolidays: Bool) -> Result<DateRule, Invalid> {
        let written = text.trimmingSpaces
        if written.lowercased() == "holidays" {
            guard allowHolidays else {
                return .failure(Invalid(description: "\"holidays\" can only be excluded (in except), not listed in dates"))
            }
            return .success(.holidays)
        }
        let ends = written.split(separator: "..", omittingEmptySubsequences: false).map(String.init)
        guard ends.count <= 2 else { return .failure(notARule(written)) }
        if ends.count == 2 {
            if let from = date(ends[0]), let to = date(ends[1]) {
                guard from <= to else {
                    return .failure(Invalid(description: "\"\(written)\" ends before it starts; a range of full dates must run forwards (a yearly range such as 12-24..01-06 may cross the new year)"))
                }
                return .success(.dates(from...to))
            }
            if let from = monthDay(ends[0]), let to = monthDay(ends[1]) { return .success(.yearly(from: from, to: to)) }
            if (date(ends[0]) != nil) != (date(ends[1]) != nil) {
                return .failure(Invalid(description: "\"\(written)\" mixes a full date with a yearly one; write both ends as YYYY-MM-DD, or both as MM-DD"))
            }
            return .failure(notARule(written))
        }
        if let single = date(written) { return .success(.dates(single...single)) }
        if let yearly = monthDay(written) { return .success(.yearly(from: yearly, to: yearly)) }
        return .failure(notARule(written))
    }

    private static func notARule(_ written: String) -> Invalid {
        Invalid(description: "\"\(written)\" is not a date (expected YYYY-MM-DD such as 2026-04-05, MM-DD for every year such as 12-25, or a range such as 12-24..01-06)")
    }

    private static func numbers(_ text: String, lengths: [Int]) -> [Int]? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.map(\.count) == lengths, parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return nil }
        return parts.compactMap { Int($0) }
    }

    static func date(_ text: String) -> CivilDate? {
        numbers(text, lengths: [4, 2, 2]).flatMap { CivilDate(year: $0[0], month: $0[1], day: $0[2]) }
    }

    static func monthDay(_ text: String) -> MonthDay? {
        numbers(text, lengths: [2, 2]).flatMap { MonthDay(month: $0[0], day: $0[1]) }
    }

    /// Whether `date` is one this rule names; `holidays` are the session's list.
    public func contains(_ date: CivilDate, holidays: [DateRule]) -> Bool {
        switch self {
        case .dates(let range):
            return range.contains(date)
        case .yearly(let from, let to):
            let day = MonthDay(date)
            return from <= to ? (from...to).contains(day) : day >= from || day <= to
        case .holidays:
            return holidays.contains { $0 != .holidays && $0.contains(date, holidays: []) }
        }
    }

    public var description: String {
        switch self {
        case .dates(let range): range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound)..\(range.upperBound)"
        case .yearly(let from, let to): from == to ? "\(from)" : "\(from)..\(to)"
        case .holidays: "holidays"
        }
    }
}

/// `dates` and `except` together: a date is allowed when `dates` is empty or names it, and
/// `except` does not.
public struct DateFilter: Sendable, Hashable {
    public var dates: [DateRule]
    public var except: [DateRule]

    public init(dates: [DateRule] = [], except: [DateRule] = []) {
        self.dates = dates
        self.except = except
    }

    public static let always = DateFilter()

    public var isEmpty: Bool { dates.isEmpty && except.isEmpty }

    public func allows(_ date: CivilDate, holidays: [DateRule]) -> Bool {
        (dates.isEmpty || dates.contains { $0.contains(date, holidays: holidays) })
            && !except.contains { $0.contains(date, holidays: holidays) }
    }
}
