import JukeboxCalendar

// Day plans: `plans` (named lists of times), `days` (rules that choose one by date) and
// `calendars` (events that choose one by their summary).
extension SessionReader {
    static let planEntryKeys = ["at", "clip", "priority"]
    static let planRuleKeys = ["plan", "days", "dates", "except", "rule", "from"]
    static let calendarKeys = ["name", "source", "refresh", "plans"]

    mutating func dayPlans(_ fields: [String: JSONValue], clips: [Clip], sessionDirectory: String) -> DayPlans? {
        guard let value = fields["plans"] else {
            for key in ["days", "calendars"] where fields[key] != nil {
                problem(key, "chooses among plans, and the session has none: add \"plans\", such as {\"regular\": [{\"at\": \"08:00\", \"clip\": \"bell\"}]}")
            }
            return nil
        }
        let plans = self.plans(value, clips: clips)
        // Names that could not be read are not complained of again by every rule naming them.
        let names = plans.map { Set($0.map(\.name)) }
        let rules = fields["days"].map { self.planRules($0, names: names) } ?? []
        let calendars = fields["calendars"].map { self.calendars($0, names: names, sessionDirectory: sessionDirectory) } ?? []
        guard let plans else { return nil }
        return DayPlans(plans: plans, rules: rules, calendars: calendars)
    }

    mutating func plans(_ value: JSONValue, clips: [Clip]) -> [(name: String, entries: [DayPlans.Entry])]? {
        guard case .object(let fields) = value, !fields.isEmpty, fields.count <= DayPlans.maxPlans else {
            if case .object(let fields) = value, fields.count > DayPlans.maxPlans {
                problem("plans", "has \(fields.count) plans, more than the \(DayPlans.maxPlans) a session may have")
            } else {
                problem("plans", "\(value.shortDescription) is not 1 to \(DayPlans.maxPlans) named plans, such as {\"regular\": [{\"at\": \"08:00\", \"clip\": \"bell\"}], \"none\": []}")
            }
            return nil
        }
        let ids = Set(clips.map(\.id))
        var plans: [(name: String, entries: [DayPlans.Entry])] = []
        var readable = true
        for name in ordered(fields, at: "plans") {
            let field = "plans.\(name)"
            if let trouble = Self.planNameProblem(name) {
                problem(field, trouble)
                readable = false
                continue
            }
            guard case .array(let items) = fields[name]!, items.count <= DayPlans.maxEntries else {
                problem(field, "\(fields[name]!.shortDescription) is not a list of up to \(DayPlans.maxEntries) times such as {\"at\": \"08:00\", \"clip\": \"bell\"} (an empty list is a day with no times)")
                readable = false
                continue
            }
            var entries: [DayPlans.Entry] = []
            for (index, item) in items.enumerated() {
                let place = "\(field)[\(index)]"
                guard let entry = object(item, at: place, allowed: Self.planEntryKeys) else { continue }
                var time: FixedTime?
                switch entry["at"] {
                case .string(let text)?:
                    switch FixedTime.parse(text) {
                    case .success(let parsed):
                        time = parsed
                        if parsed.sunEvent != nil, firstSunTime == nil { firstSunTime = "\(place).at" }
                    case .failure(let invalid): problem("\(place).at", invalid.description)
                    }
                case let other?: problem("\(place).at", "\(other.shortDescription) is not a time (expected a string such as \"08:00\" or \"sunset-15m\")")
                case nil: problem("\(place).at", "missing (expected a time such as \"08:00\")")
                }
                var clipID: String?
                switch entry["clip"] {
                case .string(let id)? where ids.contains(id): clipID = id
                case .string(let id)?: problem("\(place).clip", "\"\(id)\" is not a clip of this session (its ids: \(Self.listed(clips.map(\.id))))")
                case let other?: problem("\(place).clip", "\(other.shortDescription) is not a clip's id")
                case nil: problem("\(place).clip", "missing (the id of the clip played at this time)")
                }
                var urgent = false
                if let priority = entry["priority"] {
                    switch priority {
                    case .string("now"): urgent = true
                    case .string("normal"): break
                    default: problem("\(place).priority", "\(priority.shortDescription) is not \"normal\" or \"now\"")
                    }
                }
                if let time, let clipID { entries.append(DayPlans.Entry(time: time, clipID: clipID, urgent: urgent)) }
            }
            plans.append((name, entries))
        }
        return readable ? plans : nil
    }

    static func planNameProblem(_ name: String) -> String? {
        nameProblem(name, of: "a plan", limit: DayPlans.maxPlanNameLength, example: "late-start")
    }

    /// What is wrong with `name` as a name of plans and calendars (and a calendar's copy's
    /// file): 1 to `limit` letters, digits, `-` and `_`.
    static func nameProblem(_ name: String, of what: String, limit: Int, example: String) -> String? {
        let allowed = name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }
        guard !name.isEmpty, name.count <= limit, allowed else {
            return "\"\(name)\" is not \(what)'s name: 1 to \(limit) letters, digits, - and _, such as \"\(example)\""
        }
        return nil
    }

    mutating func planRules(_ value: JSONValue, names: Set<String>?) -> [DayPlans.Rule] {
        guard case .array(let items) = value, !items.isEmpty, items.count <= DayPlans.maxRules else {
            problem("days", Self.listProblem(value, of: "rules", limit: DayPlans.maxRules, example: #"{"plan": "regular", "days": "mon-fri"}"#))
            return []
        }
        var rules: [DayPlans.Rule] = []
        for (index, item) in items.enumerated() {
            let field = "days[\(index)]"
            guard let fields = object(item, at: field, allowed: Self.planRuleKeys) else { continue }
            let plan = planName(fields["plan"], at: "\(field).plan", names: names)
            var days: Set<Weekday>?
            switch fields["days"] {
            case nil: break
            case .string(let text)?:
                switch Weekday.parseSet(text) {
                case .success(let set): days = set
                case .failure(let invalid): problem("\(field).days", invalid.description)
                }
            case .array(let list)? where !list.isEmpty:
                days = []
                for (at, name) in list.enumerated() {
                    if case .string(let text) = name, let day = Weekday(name: text) { days?.insert(day) } else {
                        problem("\(field).days[\(at)]", "\(name.shortDescription) is not a day (expected mon, tue, wed, thu, fri, sat or sun)")
                    }
                }
            case let other?:
                problem("\(field).days", "\(other.shortDescription) is not days such as \"mon-fri\" or [\"sat\", \"sun\"]")
            }
            let filter = dateFilter(fields, at: field)
            var recurrence: DayPlans.Recurrence?
            switch (fields["rule"], fields["from"]) {
            case (nil, nil): break
            case (nil, _?): problem("\(field).from", "counts a \"rule\" from a date, and this has none: add \"rule\", or leave from out")
            case (_?, nil): problem("\(field).rule", "needs \"from\": the date the rule is counted from, such as \"2026-09-01\"")
            case (let rule?, let from?):
                var text: String?
                if case .string(let written) = rule {
                    if let trouble = ICalendar.ruleProblem(written) { problem("\(field).rule", trouble) } else { text = written }
                } else {
                    problem("\(field).rule", "\(rule.shortDescription) is not an RRULE (expected a string such as \"FREQ=MONTHLY;BYDAY=1WE\")")
                }
                let start = date(from, at: "\(field).from")
                if let text, let start { recurrence = DayPlans.Recurrence(rule: text, from: start) }
            }
            if let plan { rules.append(DayPlans.Rule(plan: plan, days: days, filter: filter, recurrence: recurrence)) }
        }
        return rules
    }

    /// A plan's name that `names` holds (nil names: the plans could not be read, so it is
    /// not checked).
    mutating func planName(_ value: JSONValue?, at field: String, names: Set<String>?) -> String? {
        guard case .string(let name)? = value else {
            problem(field, value.map { "\($0.shortDescription) is not a plan's name" } ?? "missing (the name of one of the session's plans)")
            return nil
        }
        guard let names else { return nil }
        guard names.contains(name) else {
            problem(field, "\"\(name)\" is not one of the session's plans (\(Self.listed(names.sorted())))")
            return nil
        }
        return name
    }

    /// A whole date, `YYYY-MM-DD`.
    mutating func date(_ value: JSONValue, at field: String) -> CivilDate? {
        if case .string(let text) = value, case .success(.dates(let range)) = DateRule.parse(text, allowHolidays: false), range.lowerBound == range.upperBound {
            return range.lowerBound
        }
        problem(field, "\(value.shortDescription) is not a date (expected YYYY-MM-DD, such as \"2026-09-01\")")
        return nil
    }

    mutating func calendars(_ value: JSONValue, names: Set<String>?, sessionDirectory: String) -> [DayPlans.Calendar] {
        guard case .array(let items) = value, !items.isEmpty, items.count <= DayPlans.maxCalendars else {
            problem("calendars", Self.listProblem(value, of: "calendars", limit: DayPlans.maxCalendars, example: #"{"name": "school", "source": "https://…/basic.ics", "plans": {"No school": "none"}}"#))
            return []
        }
        var calendars: [DayPlans.Calendar] = []
        var used: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let field = "calendars[\(index)]"
            guard let fields = object(item, at: field, allowed: Self.calendarKeys) else { continue }
            var name: String?
            switch fields["name"] {
            case .string(let text)? where Self.calendarNameProblem(text) == nil:
                if let earlier = used[text] { problem("\(field).name", "\"\(text)\" is also the name of calendars[\(earlier)]; each needs its own") } else {
                    used[text] = index
                    name = text
                }
            case .string(let text)?: problem("\(field).name", Self.calendarNameProblem(text)!)
            case let other?: problem("\(field).name", "\(other.shortDescription) is not a name such as \"school\"")
            case nil: problem("\(field).name", "missing (a short name such as \"school\", for messages and its saved copy)")
            }
            let source = calendarSource(fields["source"], at: "\(field).source", sessionDirectory: sessionDirectory)
            var refresh = DayPlans.Calendar.defaultRefresh
            if let value = fields["refresh"], let given = duration(value, at: "\(field).refresh") {
                if given >= DayPlans.Calendar.shortestRefresh { refresh = given } else {
                    problem("\(field).refresh", "\(value.shortDescription) is too often (at least \(DurationText.format(DayPlans.Calendar.shortestRefresh)); a calendar changes seldom, and its server counts the fetches)")
                }
            }
            var plans: [(summary: String, plan: String, title: String)] = []
            switch fields["plans"] {
            case .object(let map)? where !map.isEmpty && map.count <= DayPlans.Calendar.maxSummaries:
                var keys: [String: String] = [:]
                for summary in ordered(map, at: "\(field).plans") {
                    let place = "\(field).plans.\(summary)"
                    let key = ICalendar.key(summary)
                    guard !key.isEmpty else { problem(place, "an empty summary matches no event; write the event's title"); continue }
                    if let earlier = keys[key] { problem(place, "is the same summary as \"\(earlier)\" (summaries are matched trimmed and in any case)"); continue }
                    keys[key] = summary
                    if let plan = planName(map[summary], at: place, names: names) { plans.append((key, plan, summary.trimmingSpaces)) }
                }
            case let other?:
                problem("\(field).plans", "\(other.shortDescription) is not 1 to \(DayPlans.Calendar.maxSummaries) event summaries and their plans, such as {\"No school\": \"none\", \"Late start\": \"late-start\"}")
            case nil:
                problem("\(field).plans", "missing (which event summaries choose which plan, such as {\"No school\": \"none\"})")
            }
            if let name, let source { calendars.append(DayPlans.Calendar(name: name, source: source, refresh: refresh, plans: plans)) }
        }
        return calendars
    }

    static func calendarNameProblem(_ name: String) -> String? {
        nameProblem(name, of: "a calendar", limit: DayPlans.Calendar.maxNameLength, example: "school")
    }

    /// A calendar's `source`: an http(s) address, or a file (relative to the session's folder).
    mutating func calendarSource(_ value: JSONValue?, at field: String, sessionDirectory: String) -> DayPlans.Calendar.Source? {
        guard case .string(let text)? = value, !text.isEmpty, text.utf8.count <= 2048, !text.contains("\u{0}") else {
            problem(field, value.map { "\($0.shortDescription) is not a calendar's address or file" } ?? "missing (the calendar's .ics address, such as \"https://calendar.google.com/…/basic.ics\", or a file)")
            return nil
        }
        let lower = text.lowercased()
        if lower.hasPrefix("webcal://") || lower.hasPrefix("webcals://") {
            problem(field, "\"\(text)\" is a webcal:// address; write it with https:// in its place (webcal is https under another name)")
            return nil
        }
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            let rest = text.drop { $0 != "/" }.dropFirst(2)
            guard let host = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first, !host.isEmpty,
                  !text.contains(where: { $0 == " " || $0.isNewline }) else {
                problem(field, "\"\(text)\" is not an address (expected such as \"https://calendar.example/school.ics\")")
                return nil
            }
            return .web(text)
        }
        if lower.contains("://") {
            problem(field, "\"\(text)\" is not an http:// or https:// address, or a file")
            return nil
        }
        return .file(FilePath.normalize(FilePath.join(sessionDirectory, text)))
    }

    /// An object's keys in the order the file lists them (sorted, for a session made in code).
    func ordered(_ fields: [String: JSONValue], at field: String) -> [String] {
        fields.keys.sorted { left, right in
            let (a, b) = (keyOffsets["\(field).\(left)"], keyOffsets["\(field).\(right)"])
            if let a, let b { return a < b }
            return left < right
        }
    }

    /// A few names for a message: the first eight, and how many more.
    static func listed(_ names: [String]) -> String {
        let shown = names.prefix(8).joined(separator: ", ")
        return names.count > 8 ? shown + " and \(names.count - 8) more" : shown
    }
}
