/// One of a clip's `at` times: the clip is queued at that moment, as a scheduled entry.
/// Written `"07:55"`, `"07:55@mon-fri"`, `"*:00"` (every hour on the hour), `"*:30@sat,sun"`
/// or `"sunset-15m@fri"`; in the object form it may also carry `dates` and `except`.
public struct FixedTime: Sendable, Hashable, CustomStringConvertible {
    public enum Time: Sendable, Hashable {
        case daily(DayTime)
        /// Every hour at this minute.
        case hourly(minute: Int)
    }

    public let time: Time
    /// nil: every day.
    public let days: Set<Weekday>?
    public var filter: DateFilter

    public init(time: Time, days: Set<Weekday>? = nil, filter: DateFilter = .always) {
        self.time = time
        self.days = days
        self.filter = filter
    }

    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    public static func parse(_ text: String) -> Result<FixedTime, Invalid> {
        let written = text.trimmingSpaces
        let parts = written.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return .failure(Invalid(description: "\"\(written)\" has more than one @; write TIME@DAYS such as 07:55@mon-fri")) }
        var days: Set<Weekday>?
        if parts.count == 2 {
            switch Weekday.parseSet(String(parts[1])) {
            case .success(let set): days = set
            case .failure(let problem): return .failure(Invalid(description: "\"\(written)\": \(problem)"))
            }
        }
        let clock = String(parts[0]).trimmingSpaces
        if clock.hasPrefix("*:") {
            let minute = clock.dropFirst(2)
            guard minute.count == 2, minute.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(minute), value < 60 else {
                return .failure(Invalid(description: "\"\(written)\": after *: come two digits for the minute of every hour, such as *:00 or *:30"))
            }
            return .success(FixedTime(time: .hourly(minute: value), days: days))
        }
        switch DayTime.parse(clock) {
        case .success(let time):
            if case .clock(let hour) = time, hour.minuteOfDay == 1440 {
                return .failure(Invalid(description: "\"\(written)\": 24:00 is not a time of day; write 00:00"))
            }
            return .success(FixedTime(time: .daily(time), days: days))
        case .failure(let problem):
            return .failure(Invalid(description: problem.description + "; an at time may also be *:MM for every hour"))
        }
    }

    public var sunEvent: SunEvent? { if case .daily(let time) = time { time.sunEvent } else { nil } }

    public var description: String {
        let clock = switch time {
        case .daily(let time): time.description
        case .hourly(let minute): "*:" + (minute < 10 ? "0" : "") + "\(minute)"
        }
        return days.map { clock + "@" + Weekday.describe($0) } ?? clock
    }

    /// The moments this time happens on the local `date`, earliest first: none when the day or
    /// date is not one of its own, or the sun does not rise or set that day. A clock time the
    /// clocks skip is the moment they skip to, and one they repeat happens once.
    public func moments(on date: CivilDate, zone: any LocalZone, location: GeoLocation?, holidays: [DateRule]) -> [Int64] {
        guard days?.contains(date.weekday) ?? true, filter.allows(date, holidays: holidays) else { return [] }
        switch time {
        case .daily(.clock(let clock)):
            return [zone.moment(of: date, at: clock.minuteOfDay * 60)]
        case .daily(.sun(let event, let offset)):
            guard let location, let moment = SunCalculator.time(of: event, on: date, at: location).epochSeconds else { return [] }
            return [moment + offset.components.seconds]
        case .hourly(let minute):
            var moments: [Int64] = []
            for hour in 0..<24 {
                let moment = zone.moment(of: date, at: hour * 3600 + minute * 60)
                if moments.last != moment { moments.append(moment) }
            }
            return moments
        }
    }

    /// The first moment after `after` at which this time happens, looking up to `horizonDays`
    /// ahead; nil when it does not happen in that time (its dates are past, or the sun does
    /// not rise).
    public func next(after: Int64, zone: any LocalZone, location: GeoLocation?, holidays: [DateRule], horizonDays: Int = 400) -> Int64? {
        let today = zone.localTime(at: after).date
        // A sun time with an offset can fall on the day before or after its date.
        for day in -1...horizonDays {
            let date = today.adding(days: day)
            if let moment = moments(on: date, zone: zone, location: location, holidays: holidays).first(where: { $0 > after }) {
                return moment
            }
        }
        return nil
    }
}

extension Weekday {
    /// `"mon-fri"`, `"sat,sun"`, `"mon,wed-fri"`; a range may wrap past Sunday (`"fri-mon"`).
    static func parseSet(_ text: String) -> Result<Set<Weekday>, FixedTime.Invalid> {
        var days = Set<Weekday>()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = item.split(separator: "-", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
            guard (1...2).contains(ends.count), let first = Weekday(name: ends[0]), let last = Weekday(name: ends[ends.count - 1]) else {
                return .failure(FixedTime.Invalid(description: "\"\(item)\" is not a day or a range of days (expected mon, tue, wed, thu, fri, sat, sun, or a range such as mon-fri)"))
            }
            var day = first
            days.insert(day)
            while day != last {
                day = Weekday(rawValue: (day.rawValue + 1) % 7)!
                days.insert(day)
            }
        }
        return .success(days)
    }

    /// The days as `parseSet` reads them, Monday first: `"mon-fri"`, `"sat,sun"`.
    static func describe(_ days: Set<Weekday>) -> String {
        let order: [Weekday] = [.mon, .tue, .wed, .thu, .fri, .sat, .sun]
        var runs: [[Weekday]] = []
        for day in order where days.contains(day) {
            if let last = runs.last?.last, order.firstIndex(of: last)! + 1 == order.firstIndex(of: day)! {
                runs[runs.count - 1].append(day)
            } else {
                runs.append([day])
            }
        }
        return runs.map { $0.count > 2 ? "\($0.first!)-\($0.last!)" : $0.map(\.description).joined(separator: ",") }.joined(separator: ",")
    }
}
