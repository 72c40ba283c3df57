import CICal

/// iCalendar (RFC 5545) through libical: which events of a calendar happen in a span of days,
/// and the dates an RRULE gives. The only file that imports libical; what it gives out is in
/// Swift types only.
///
/// Covered: RRULE (with BYDAY ordinals, BYMONTHDAY, BYSETPOS, INTERVAL, COUNT and UNTIL),
/// EXDATE and RDATE; RECURRENCE-ID (a moved or cancelled occurrence); all-day, multi-day and
/// DURATION events; VTIMEZONE, IANA names, Outlook's Windows zone names, Google's
/// X-WR-TIMEZONE, and floating times. Cancelled events are left out.
///
/// libical keeps state of its own per thread (its error number), so a caller runs this on a
/// thread of its own; libical is told never to abort on what it cannot read.
public enum ICalendar {
    /// An event's occurrence, and what it covers.
    public struct Occurrence: Sendable, Equatable {
        public enum Span: Sendable, Equatable {
            /// All day: `count` dates from `first` (days since 1970-01-01).
            case days(first: Int, count: Int)
            /// From `start` up to `end` (seconds since the epoch, UTC).
            case moments(start: Int64, end: Int64)
            /// Floating: clock readings wherever it is read, as seconds since 1970-01-01 00:00
            /// of that clock.
            case floating(start: Int64, end: Int64)
        }

        public var summary: String
        public var span: Span

        public init(summary: String, span: Span) {
            self.summary = summary
            self.span = span
        }
    }

    /// What is wrong with a calendar, in words.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// The largest calendar read: years of a busy school's events are well under 1 MB.
    public static let maxBytes = 4 << 20
    /// At most this many events (VEVENTs) in one calendar.
    public static let maxEvents = 20_000
    /// At most this many occurrences of one event in the span read; the rest are not seen.
    public static let maxOccurrencesPerEvent = 2_000
    /// At most this many steps of one rule's iterator: a rule that yields nothing for ever
    /// (`FREQ=YEARLY;BYMONTHDAY=31;BYMONTH=2`) stops there.
    public static let maxSteps = 100_000

    /// A summary as calendars are matched by it: trimmed, in lower case.
    public static func key(_ summary: String) -> String {
        var scalars = Substring(summary)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return scalars.lowercased()
    }

    private static let quiet: Void = {
        icalerror_set_errors_are_fatal(0)
    }()

    /// The occurrences of `text`'s events that touch the dates `from` through `through` (days
    /// since 1970-01-01; a day more each side is read, for zones), whose summaries' keys are
    /// in `keeping` (nil: every event).
    public static func read(_ text: String, from: Int, through: Int, keeping: Set<String>? = nil) throws(Problem) -> [Occurrence] {
        _ = quiet
        guard text.utf8.count <= maxBytes else {
            throw Problem("is larger than \(maxBytes >> 20) MB; a calendar of a few years is far smaller")
        }
        guard let root = icalcomponent_new_from_string(text) else {
            throw Problem("is not an iCalendar file: it has no BEGIN:VCALENDAR (an .ics address gives one; a calendar's web page does not)")
        }
        defer { icalcomponent_free(root) }
        guard icalcomponent_isa(root) == ICAL_VCALENDAR_COMPONENT else {
            throw Problem("is not an iCalendar file: it does not start with BEGIN:VCALENDAR")
        }
        let window = (low: Int64(from - 1) * 86_400, high: Int64(through + 2) * 86_400)
        let fallbackZone = xWRTimezone(root)
        var events: [OpaquePointer] = []
        var event = icalcomponent_get_first_component(root, ICAL_VEVENT_COMPONENT)
        while let current = event {
            events.append(current)
            guard events.count <= maxEvents else {
                throw Problem("has more than \(maxEvents) events; give jukeboxd a calendar of the events that choose plans")
            }
            event = icalcomponent_get_next_component(root, ICAL_VEVENT_COMPONENT)
        }
        // Occurrences moved or cancelled by their own VEVENT (RECURRENCE-ID): the series does
        // not give them.
        var replaced = Set<String>()
        for event in events {
            let id = icalcomponent_get_recurrenceid(event)
            guard icaltime_is_null_time(id) == 0, let uid = icalcomponent_get_uid(event) else { continue }
            replaced.insert(String(cString: uid) + "\u{0}" + String(stamp(resolved(id, property: icalcomponent_get_first_property(event, ICAL_RECURRENCEID_PROPERTY), fallback: fallbackZone))))
        }
        var found: [Occurrence] = []
        for event in events {
            guard icalcomponent_get_status(event) != ICAL_STATUS_CANCELLED else { continue }
            let summary = icalcomponent_get_summary(event).map { String(cString: $0) } ?? ""
            if let keeping, !keeping.contains(key(summary)) { continue }
            var start = icalcomponent_get_dtstart(event)
            guard icaltime_is_null_time(start) == 0, icaltime_is_valid_time(start) != 0 else { continue }
            start = resolved(start, property: icalcomponent_get_first_property(event, ICAL_DTSTART_PROPERTY), fallback: fallbackZone)
            let length = self.length(of: event, start: start, fallback: fallbackZone)
            let isOverride = icaltime_is_null_time(icalcomponent_get_recurrenceid(event)) == 0
            let uid = icalcomponent_get_uid(event).map { String(cString: $0) } ?? ""
            var starts: [icaltimetype] = [start]
            if !isOverride, icalcomponent_get_first_property(event, ICAL_RRULE_PROPERTY) != nil {
                starts = repeats(of: event, start: start, before: window.high, after: window.low - length.seconds)
            }
            if !isOverride { starts += extraDates(of: event, zone: start.zone, fallback: fallbackZone) }
            let excluded = isOverride ? [] : exclusions(of: event, fallback: fallbackZone)
            var seen = Set<Int64>()
            var kept = 0
            for occurrence in starts {
                let at = stamp(occurrence)
                guard seen.insert(at).inserted, !excluded.contains(at) else { continue }
                if !isOverride, replaced.contains(uid + "\u{0}" + String(at)) { continue }
                guard at + length.seconds >= window.low, at < window.high else { continue }
                kept += 1
                guard kept <= maxOccurrencesPerEvent else { break }
                found.append(Occurrence(summary: summary, span: span(of: occurrence, at: at, length: length)))
            }
        }
        return found
    }

    /// What is wrong with `rule` as an RRULE for `days` rules, in words; nil when nothing is.
    public static func ruleProblem(_ rule: String) -> String? {
        _ = quiet
        guard !rule.isEmpty, rule.utf8.count <= 1000, rule.allSatisfy({ $0.isASCII && !$0.isNewline }) else {
            return "\"\(rule)\" is not an RRULE (expected such as \"FREQ=MONTHLY;BYDAY=1WE\")"
        }
        icalerror_clear_errno()
        let parsed = icalrecurrencetype_from_string(rule)
        guard parsed.freq != ICAL_NO_RECURRENCE, icalerrno_return().pointee == ICAL_NO_ERROR else {
            return "\"\(rule)\" is not an RRULE libical can read (expected such as \"FREQ=MONTHLY;BYDAY=1WE\" or \"FREQ=WEEKLY;INTERVAL=2;BYDAY=MO\")"
        }
        switch parsed.freq {
        case ICAL_DAILY_RECURRENCE, ICAL_WEEKLY_RECURRENCE, ICAL_MONTHLY_RECURRENCE, ICAL_YEARLY_RECURRENCE:
            return nil
        default:
            return "\"\(rule)\" repeats within a day; a rule chooses whole days (FREQ=DAILY, WEEKLY, MONTHLY or YEARLY)"
        }
    }

    /// The dates (days since 1970-01-01) from `from` through `through` that `rule` gives,
    /// counted from the date `start` (days since 1970-01-01). Empty for a rule `ruleProblem`
    /// refuses.
    public static func ruleDates(_ rule: String, start: Int, from: Int, through: Int) -> [Int] {
        guard ruleProblem(rule) == nil else { return [] }
        let recurrence = icalrecurrencetype_from_string(rule)
        var first = icaltime_null_date()
        (first.year, first.month, first.day) = civil(start)
        (first.hour, first.minute, first.second) = (0, 0, 0)
        first.is_date = 1
        guard let iterator = icalrecur_iterator_new(recurrence, first) else { return [] }
        defer { icalrecur_iterator_free(iterator) }
        if recurrence.count == 0, from > start {
            var jump = first
            (jump.year, jump.month, jump.day) = civil(from)
            _ = icalrecur_iterator_set_start(iterator, jump)
        }
        var dates: [Int] = []
        for _ in 0..<maxSteps {
            let next = icalrecur_iterator_next(iterator)
            guard icaltime_is_null_time(next) == 0 else { break }
            let day = days(next)
            if day > through { break }
            if day >= from { dates.append(day) }
        }
        return dates
    }

    // MARK: - Times

    /// `time` with its zone found: the calendar's VTIMEZONE or a zone libical knows by its
    /// IANA name (libical does these), else one of Windows' names (Outlook's), else the
    /// calendar's X-WR-TIMEZONE for a floating time.
    private static func resolved(_ time: icaltimetype, property: OpaquePointer?, fallback: OpaquePointer?) -> icaltimetype {
        guard time.is_date == 0, time.zone == nil else { return time }
        var time = time
        if let property, let parameter = icalproperty_get_first_parameter(property, ICAL_TZID_PARAMETER),
           let tzid = icalparameter_get_tzid(parameter) {
            let name = String(cString: tzid)
            if let zone = builtinZone(named: name) {
                time.zone = zone
                return time
            }
        }
        if let fallback { time.zone = fallback }
        return time
    }

    private static func builtinZone(named name: String) -> OpaquePointer? {
        if let zone = icaltimezone_get_builtin_timezone(name) { return zone }
        var trimmed = name
        // Outlook writes some names quoted or with a prefix of its own ("/Europe/Amsterdam").
        while trimmed.hasPrefix("/") { trimmed.removeFirst() }
        if trimmed != name, let zone = icaltimezone_get_builtin_timezone(trimmed) { return zone }
        if let iana = WindowsZones.iana[name] { return icaltimezone_get_builtin_timezone(iana) }
        return nil
    }

    /// Google's X-WR-TIMEZONE: the zone a floating time of the calendar is in.
    private static func xWRTimezone(_ root: OpaquePointer) -> OpaquePointer? {
        var property = icalcomponent_get_first_property(root, ICAL_X_PROPERTY)
        while let current = property {
            if let name = icalproperty_get_x_name(current), String(cString: name).uppercased() == "X-WR-TIMEZONE",
               let value = icalproperty_get_value_as_string(current) {
                return builtinZone(named: String(cString: value).trimmingWhitespace)
            }
            property = icalcomponent_get_next_property(root, ICAL_X_PROPERTY)
        }
        return nil
    }

    /// A time as one number to compare by: the date's midnight for a date, seconds since the
    /// epoch for a time in a zone, and the clock reading's for a floating one.
    private static func stamp(_ time: icaltimetype) -> Int64 {
        if time.is_date != 0 { return Int64(days(time)) * 86_400 }
        if let zone = time.zone { return Int64(icaltime_as_timet_with_zone(time, zone)) }
        return Int64(icaltime_as_timet(time))
    }

    private struct Length {
        var days: Int
        var seconds: Int64
    }

    /// How long an event lasts: DTEND, or DURATION, else a day for a date and nothing for a time.
    private static func length(of event: OpaquePointer, start: icaltimetype, fallback: OpaquePointer?) -> Length {
        if start.is_date != 0 {
            var end = icalcomponent_get_dtend(event)
            if icalcomponent_get_first_property(event, ICAL_DTEND_PROPERTY) == nil,
               icalcomponent_get_first_property(event, ICAL_DURATION_PROPERTY) != nil {
                end = icaltime_add(start, icalcomponent_get_duration(event))
            }
            let count = icaltime_is_null_time(end) == 0 ? max(days(end) - days(start), 1) : 1
            return Length(days: count, seconds: Int64(count) * 86_400)
        }
        var seconds: Int64 = 0
        if icalcomponent_get_first_property(event, ICAL_DTEND_PROPERTY) != nil {
            let end = resolved(icalcomponent_get_dtend(event), property: icalcomponent_get_first_property(event, ICAL_DTEND_PROPERTY), fallback: fallback)
            if icaltime_is_null_time(end) == 0 { seconds = stamp(end) - stamp(start) }
        } else if icalcomponent_get_first_property(event, ICAL_DURATION_PROPERTY) != nil {
            seconds = Int64(icaldurationtype_as_int(icalcomponent_get_duration(event)))
        }
        return Length(days: 0, seconds: max(seconds, 0))
    }

    private static func span(of start: icaltimetype, at stamp: Int64, length: Length) -> Occurrence.Span {
        if start.is_date != 0 { return .days(first: days(start), count: length.days) }
        if start.zone != nil { return .moments(start: stamp, end: stamp + length.seconds) }
        return .floating(start: stamp, end: stamp + length.seconds)
    }

    /// The starts an event's RRULEs give that may touch `after..<before`.
    private static func repeats(of event: OpaquePointer, start: icaltimetype, before: Int64, after: Int64) -> [icaltimetype] {
        var starts: [icaltimetype] = []
        var property = icalcomponent_get_first_property(event, ICAL_RRULE_PROPERTY)
        while let current = property {
            let rule = icalproperty_get_rrule(current)
            if rule.freq != ICAL_NO_RECURRENCE, let iterator = icalrecur_iterator_new(rule, start) {
                defer { icalrecur_iterator_free(iterator) }
                // Straight to the span read, unless COUNT needs every occurrence counted.
                if rule.count == 0, after > stamp(start) {
                    var jump = start
                    let day = Int(after / 86_400) - 1
                    (jump.year, jump.month, jump.day) = civil(day)
                    if start.is_date == 0 { (jump.hour, jump.minute, jump.second) = (0, 0, 0) }
                    _ = icalrecur_iterator_set_start(iterator, jump)
                }
                var taken = 0
                for _ in 0..<maxSteps {
                    var next = icalrecur_iterator_next(iterator)
                    guard icaltime_is_null_time(next) == 0 else { break }
                    next.zone = start.zone
                    let at = stamp(next)
                    if at >= before { break }
                    if at >= after - 86_400 {
                        starts.append(next)
                        taken += 1
                        if taken > maxOccurrencesPerEvent { break }
                    }
                }
            }
            property = icalcomponent_get_next_property(event, ICAL_RRULE_PROPERTY)
        }
        return starts
    }

    /// RDATE's dates and times (periods by their start).
    private static func extraDates(of event: OpaquePointer, zone: OpaquePointer?, fallback: OpaquePointer?) -> [icaltimetype] {
        var dates: [icaltimetype] = []
        var property = icalcomponent_get_first_property(event, ICAL_RDATE_PROPERTY)
        while let current = property {
            let value = icalproperty_get_rdate(current)
            let time = icaltime_is_null_time(value.time) == 0 ? value.time : value.period.start
            if icaltime_is_null_time(time) == 0 {
                dates.append(resolved(time, property: current, fallback: fallback))
            }
            property = icalcomponent_get_next_property(event, ICAL_RDATE_PROPERTY)
            if dates.count > maxOccurrencesPerEvent { break }
        }
        return dates
    }

    private static func exclusions(of event: OpaquePointer, fallback: OpaquePointer?) -> Set<Int64> {
        var excluded = Set<Int64>()
        var property = icalcomponent_get_first_property(event, ICAL_EXDATE_PROPERTY)
        while let current = property {
            let time = icalproperty_get_exdate(current)
            if icaltime_is_null_time(time) == 0 { excluded.insert(stamp(resolved(time, property: current, fallback: fallback))) }
            property = icalcomponent_get_next_property(event, ICAL_EXDATE_PROPERTY)
        }
        return excluded
    }

    // MARK: - Dates

    /// Days since 1970-01-01 of a time's date (Hinnant's days_from_civil).
    private static func days(_ time: icaltimetype) -> Int {
        let (year, month, day) = (Int(time.year), Int(time.month), Int(time.day))
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year, month and day of `days` since 1970-01-01 (Hinnant's civil_from_days).
    private static func civil(_ days: Int) -> (Int32, Int32, Int32) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (Int32(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), Int32(month), Int32(day))
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace || first == "\"" { text.removeFirst() }
        while let last = text.last, last.isWhitespace || last == "\"" { text.removeLast() }
        return String(text)
    }
}
