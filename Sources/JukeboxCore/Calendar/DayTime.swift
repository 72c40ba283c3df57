/// A time of day as a session writes it, wherever a time is taken (windows, `activeHours`,
/// `at`, quiet hours, the volume schedule): a clock time (`"07:55"`), or a moment the sun
/// gives with an offset (`"sunset"`, `"sunset-15m"`, `"dawn+1h"`).
public enum DayTime: Sendable, Hashable, CustomStringConvertible {
    case clock(TimeOfDay)
    /// Needs the session's `location`.
    case sun(SunEvent, offset: Duration)

    /// The longest offset from a sun time: half a day either way.
    public static let maximumSunOffset: Duration = .seconds(12 * 3600)

    /// What is wrong with a time as written, in words for `--check` and the CLI.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Reads `text`, or says what is wrong with it and how to write it.
    public static func parse(_ text: String) -> Result<DayTime, Invalid> {
        let written = text.trimmingSpaces
        let lower = written.lowercased()
        if let event = SunEvent.allCases.first(where: { lower.hasPrefix($0.rawValue) }) {
            let rest = lower.dropFirst(event.rawValue.count)
            guard let sign = rest.first else { return .success(.sun(event, offset: .zero)) }
            guard sign == "+" || sign == "-" else {
                return .failure(Invalid(description: "\"\(written)\" is not a time: after \(event) comes + or - and an offset, such as \(event)-15m"))
            }
            let amount = String(rest.dropFirst())
            guard !amount.isEmpty else {
                return .failure(Invalid(description: "\"\(written)\" has no offset after \(sign): write it as \(event)\(sign)15m"))
            }
            if amount.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) {
                return .failure(Invalid(description: "\"\(written)\": the offset has no unit; write \(event)\(sign)\(amount)m for minutes (s, m and h are understood)"))
            }
            guard case .success(let offset) = DurationText.check(amount) else {
                return .failure(Invalid(description: "\"\(written)\": \"\(amount)\" is not an offset (expected e.g. 15m, 1h or 1h30m)"))
            }
            guard offset <= maximumSunOffset else {
                return .failure(Invalid(description: "\"\(written)\": an offset from the sun is at most 12h"))
            }
            return .success(.sun(event, offset: sign == "-" ? .zero - offset : offset))
        }
        if let time = TimeOfDay(written), written.count >= 4 { return .success(.clock(time)) }
        // HH:MM with numbers out of range: say which.
        let parts = written.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]), parts[1].count == 2 {
            if !(0...23).contains(hour) {
                return .failure(Invalid(description: "\"\(written)\" is not a time: the hour must be 0 to 23 (00:00 is midnight)"))
            }
            if !(0...59).contains(minute) {
                return .failure(Invalid(description: "\"\(written)\" is not a time: the minutes must be 00 to 59"))
            }
        }
        return .failure(Invalid(description: "\"\(written)\" is not a time (expected HH:MM such as 07:55, or sunrise, sunset, dawn or dusk with an optional offset such as sunset-15m)"))
    }

    public var sunEvent: SunEvent? { if case .sun(let event, _) = self { event } else { nil } }

    public var description: String {
        switch self {
        case .clock(let time):
            return time.description
        case .sun(let event, let offset):
            if offset == .zero { return event.description }
            let sign = offset < .zero ? "-" : "+"
            return "\(event)\(sign)\(DurationText.format(offset < .zero ? .zero - offset : offset))"
        }
    }

    /// Where this time falls on `date`, in seconds after the local midnight that begins it
    /// (sun times may fall before 0 or after 86 400 with a large offset), or why it does not.
    /// A clock time is its own reading; a sun time is the sun's moment on that date, placed on
    /// the local clock in force at that moment.
    public func secondOfDay(on date: CivilDate, zone: any LocalZone, location: GeoLocation?) -> Placement {
        switch self {
        case .clock(let time):
            return .at(time.minuteOfDay * 60)
        case .sun(let event, let offset):
            guard let location else { return .needsLocation }
            switch SunCalculator.time(of: event, on: date, at: location) {
            case .at(let moment):
                let shifted = moment + offset.components.seconds
                let local = shifted + Int64(zone.utcOffset(at: shifted))
                return .at(Int(local - Int64(date.daysSinceEpoch) * 86_400))
            case .sunStaysUp: return .sunStaysUp
            case .sunStaysDown: return .sunStaysDown
            }
        }
    }

    /// Where a time falls on one day.
    public enum Placement: Sendable, Hashable {
        case at(Int)
        case sunStaysUp
        case sunStaysDown
        /// A sun time, with no `location` in the session (refused when the session is read).
        case needsLocation
    }
}
