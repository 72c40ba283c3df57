import JukeboxProtocol

/// Parses and prints the durations a session file uses: `"45s"`, `"3m"`, `"1h30m"`, `"250ms"`,
/// or a plain number of seconds. Kept separate from the session parser so the CLI can reuse it.
public enum DurationText {
    /// The longest duration any field takes. Every duration is checked against it when it is
    /// read, so no later arithmetic on it (timers, sums, milliseconds) can overflow and trap.
    public static let maximum: Duration = .seconds(10 * 365 * 86_400)
    public static let maximumText = "10 years"

    public enum Invalid: Error, Sendable, Equatable {
        /// Not in a form this reads.
        case notADuration
        /// Longer than `maximum`.
        case tooLong
    }

    /// Returns nil when `text` is not a duration or is too long; see `check` for which.
    public static func parse(_ text: String) -> Duration? {
        try? check(text).get()
    }

    /// The duration `text` stands for; the caller words the error with the field path.
    public static func check(_ text: String) -> Result<Duration, Invalid> {
        let scalars = Array(text.lowercased().unicodeScalars.filter { $0 != " " })
        guard !scalars.isEmpty else { return .failure(.notADuration) }
        if let seconds = Double(String(String.UnicodeScalarView(scalars))) {
            return checkSeconds(seconds)
        }
        var totalSeconds = 0.0
        var index = 0
        var sawUnit = false
        while index < scalars.count {
            var digits = ""
            while index < scalars.count, scalars[index].properties.numericType != nil || scalars[index] == "." {
                digits.unicodeScalars.append(scalars[index])
                index += 1
            }
            var unit = ""
            while index < scalars.count, scalars[index].properties.isAlphabetic {
                unit.unicodeScalars.append(scalars[index])
                index += 1
            }
            guard let value = Double(digits), value >= 0, value.isFinite else { return .failure(.notADuration) }
            let scale: Double
            switch unit {
            case "h": scale = 3600
            case "m", "min": scale = 60
            case "s": scale = 1
            case "ms": scale = 0.001
            default: return .failure(.notADuration)
            }
            // Summed as seconds in a Double, which cannot trap; checked once at the end.
            totalSeconds += value * scale
            sawUnit = true
        }
        return sawUnit ? checkSeconds(totalSeconds) : .failure(.notADuration)
    }

    /// A plain number of seconds (a JSON number in a session file).
    public static func fromSeconds(_ seconds: Double) -> Duration? {
        try? checkSeconds(seconds).get()
    }

    public static func checkSeconds(_ seconds: Double) -> Result<Duration, Invalid> {
        guard seconds.isFinite, seconds >= 0 else { return .failure(.notADuration) }
        guard seconds <= maximum.secondsDouble else { return .failure(.tooLong) }
        return .success(.milliseconds(Int64((seconds * 1000).rounded())))
    }

    /// Short human form for logs and the CLI: `"1h30m"`, `"45s"`, `"2.5s"`.
    public static func format(_ duration: Duration) -> String {
        let totalMilliseconds = duration.milliseconds
        if totalMilliseconds < 60_000 {
            if totalMilliseconds % 1000 == 0 { return "\(totalMilliseconds / 1000)s" }
            let tenths = (totalMilliseconds + 50) / 100
            return "\(tenths / 10).\(tenths % 10)s"
        }
        return DurationWords.text(seconds: totalMilliseconds / 1000)
    }
}
