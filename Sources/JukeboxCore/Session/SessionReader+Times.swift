// The schedule's times: the interval, windows and their times of day, the location for sun
// times, `at` times, and the dates they fall on.
extension SessionReader {
    mutating func interval(_ value: JSONValue) -> ClosedRange<Duration>? {
        guard let fields = object(value, at: "interval", allowed: ["min", "max"]) else { return nil }
        let given = (min: fields["min"].map { duration($0, at: "interval.min") }, max: fields["max"].map { duration($0, at: "interval.max") })
        // One that was given but is wrong has been reported; comparing the default that
        // stands in for it would only add a second, confusing complaint.
        if given.min == .some(nil) || given.max == .some(nil) { return nil }
        let low = given.min.flatMap { $0 } ?? Session.defaultInterval.lowerBound
        let high = given.max.flatMap { $0 } ?? Session.defaultInterval.upperBound
        guard low <= high else {
            problem("interval", "min (\(DurationText.format(low))) is longer than max (\(DurationText.format(high)))")
            return nil
        }
        if high == .zero { problem("interval.max", "must be longer than 0s") }
        return low...high
    }

    mutating func windows(_ value: JSONValue, at field: String) -> [TimeWindow] {
        guard case .array(let items) = value else { problem(field, "\(value.shortDescription) is not a list of windows"); return [] }
        return items.enumerated().compactMap { index, item in window(item, at: "\(field)[\(index)]") }
    }

    mutating func window(_ value: JSONValue, at field: String) -> TimeWindow? {
        guard let fields = object(value, at: field, allowed: Self.windowKeys) else { return nil }
        let from = time(fields["from"], at: "\(field).from")
        let to = time(fields["to"], at: "\(field).to")
        let filter = dateFilter(fields, at: field)
        var days: Set<Weekday>?
        if let value = fields["days"] {
            if case .array(let names) = value, !names.isEmpty {
                days = []
                for (index, name) in names.enumerated() {
                    if case .string(let text) = name, let day = Weekday(name: text) { days?.insert(day) } else {
                        problem("\(field).days[\(index)]", "\(name.shortDescription) is not a day (expected mon, tue, wed, thu, fri, sat or sun)")
                    }
                }
            } else {
                problem("\(field).days", "\(value.shortDescription) is not a non-empty list of days such as [\"mon\", \"tue\"]")
            }
        }
        guard let from, let to else { return nil }
        if from == to {
            problem(field, "from and to are both \(from): the window is empty")
            return nil
        }
        if case .clock(let start) = from, case .clock(let end) = to, start.minuteOfDay == 0, end.minuteOfDay == 1440, days == nil, filter.isEmpty {
            problem(field, "a window of the whole day restricts nothing; leave it out")
            return nil
        }
        let midnight = DayTime.clock(TimeOfDay(minuteOfDay: 0)!)
        return TimeWindow(from: from, to: to == .clock(TimeOfDay(minuteOfDay: 1440)!) ? midnight : to, days: days, filter: filter)
    }

    /// A time as `DayTime` reads it: HH:MM, or a sun time with an offset.
    mutating func time(_ value: JSONValue?, at field: String) -> DayTime? {
        guard let value else { problem(field, "missing (expected HH:MM, or a sun time such as sunset-15m)"); return nil }
        guard case .string(let text) = value else {
            problem(field, "\(value.shortDescription) is not a time (expected HH:MM such as \"07:55\", or a sun time such as \"sunset-15m\")")
            return nil
        }
        switch DayTime.parse(text) {
        case .failure(let invalid):
            problem(field, invalid.description)
            return nil
        case .success(let time):
            if case .clock(let clock) = time, clock.minuteOfDay == 1440, field.hasSuffix(".from") {
                problem(field, "\"24:00\" can only end a window")
                return nil
            }
            if time.sunEvent != nil, firstSunTime == nil { firstSunTime = field }
            return time
        }
    }

    /// `location: {"latitude": 52.37, "longitude": 4.89}`, in degrees north and east.
    mutating func location(_ value: JSONValue) -> GeoLocation? {
        guard let fields = object(value, at: "location", allowed: ["latitude", "longitude"]) else { return nil }
        var degrees: [Double] = []
        for (key, limit, directions) in [("latitude", 90.0, "north, negative south"), ("longitude", 180.0, "east, negative west")] {
            let field = "location.\(key)"
            guard let given = fields[key] else {
                problem(field, "missing (degrees \(directions), such as 52.37)")
                continue
            }
            guard let number = number(given, at: field) else { continue }
            guard number.isFinite, abs(number) <= limit else {
                problem(field, "\(given.shortDescription) is out of range (expected -\(Int(limit)) to \(Int(limit)) degrees, \(directions))")
                continue
            }
            degrees.append(number)
        }
        guard degrees.count == 2 else { return nil }
        return GeoLocation(latitude: degrees[0], longitude: degrees[1])
    }

    /// A clip's `at`: times as `FixedTime` reads them, or objects `{"time": …, "dates": […],
    /// "except": […]}`.
    mutating func fixedTimes(_ value: JSONValue, at field: String) -> [FixedTime] {
        guard case .array(let items) = value, !items.isEmpty, items.count <= Self.maxAtTimes else {
            problem(field, Self.listProblem(value, of: "times", limit: Self.maxAtTimes, example: #"["07:55@mon-fri", "*:00", "sunset-15m"]"#))
            return []
        }
        var times: [FixedTime] = []
        for (index, item) in items.enumerated() {
            let place = "\(field)[\(index)]"
            var text: String?
            var filter = DateFilter.always
            var textField = place
            switch item {
            case .string(let written):
                text = written
            case .object:
                guard let fields = object(item, at: place, allowed: Self.atKeys) else { continue }
                textField = "\(place).time"
                guard let given = fields["time"] else { problem(textField, "missing (expected a time such as \"07:55@mon-fri\")"); continue }
                guard case .string(let written) = given else { problem(textField, "\(given.shortDescription) is not a time (expected a string such as \"07:55@mon-fri\")"); continue }
                text = written
                filter = dateFilter(fields, at: place)
            default:
                problem(place, "\(item.shortDescription) is not a time (expected a string such as \"07:55@mon-fri\", or {\"time\": …, \"except\": [\"holidays\"]})")
            }
            guard let text else { continue }
            switch FixedTime.parse(text) {
            case .failure(let invalid):
                problem(textField, invalid.description)
            case .success(var time):
                time.filter = filter
                if time.sunEvent != nil, firstSunTime == nil { firstSunTime = textField }
                times.append(time)
            }
        }
        return times
    }

    /// `dates` and `except` of a window, clip or at time.
    mutating func dateFilter(_ fields: [String: JSONValue], at field: String) -> DateFilter {
        DateFilter(
            dates: fields["dates"].map { dateRules($0, at: "\(field).dates", allowHolidays: false) } ?? [],
            except: fields["except"].map { dateRules($0, at: "\(field).except", allowHolidays: true) } ?? [])
    }

    /// At most this many dates in one list: a year of single days, and then some.
    static let maxDateRules = 400

    mutating func dateRules(_ value: JSONValue, at field: String, allowHolidays: Bool) -> [DateRule] {
        guard case .array(let items) = value, !items.isEmpty, items.count <= Self.maxDateRules else {
            problem(field, Self.listProblem(value, of: "dates", limit: Self.maxDateRules, example: #"["12-24..01-06", "2026-04-05"]"#))
            return []
        }
        var rules: [DateRule] = []
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item else {
                problem("\(field)[\(index)]", "\(item.shortDescription) is not a date (expected a string such as \"12-25\" or \"2026-04-05\")")
                continue
            }
            switch DateRule.parse(text, allowHolidays: allowHolidays) {
            case .success(let rule): rules.append(rule)
            case .failure(let invalid): problem("\(field)[\(index)]", invalid.description)
            }
        }
        return rules
    }
}
