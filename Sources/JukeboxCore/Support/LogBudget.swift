import Synchronization

/// At most `maxLines` lines of one kind in each `window`; the rest are counted, and the count
/// is told with the next line that may be written. For what anyone outside can cause as fast
/// as they like (wrong passwords, refused MQTT commands): the log, and the disk it is kept on,
/// stay bounded however long it goes on.
public struct LogBudget: Sendable {
    public let window: Duration
    public let maxLines: Int
    /// What the lines are about, plural: "wrong passwords for the web remote".
    public let what: String
    private var windowStart: ContinuousClock.Instant?
    private var written = 0
    private var unwritten = 0

    public init(what: String, maxLines: Int = 5, window: Duration = .seconds(60)) {
        self.what = what
        self.maxLines = maxLines
        self.window = window
    }

    /// The lines to write for `line` at `moment`: none, the line, or the count of the lines
    /// left out in the last window and then the line.
    public mutating func admit(_ line: String, at moment: ContinuousClock.Instant) -> [String] {
        var lines: [String] = []
        if windowStart.map({ moment - $0 >= window }) ?? true {
            if unwritten > 0 {
                lines.append("\(unwritten) more \(what) were not logged one by one (at most \(maxLines) lines every \(DurationText.format(window)))")
            }
            windowStart = moment
            written = 0
            unwritten = 0
        }
        guard written < maxLines else {
            unwritten += 1
            return lines
        }
        written += 1
        return lines + [line]
    }
}

/// A `LogBudget` shared by every copy of what holds it (a front end's connections).
public final class SharedLogBudget: Sendable {
    private let budget: Mutex<LogBudget>
    public init(_ budget: LogBudget) { self.budget = Mutex(budget) }
    public func admit(_ line: String) -> [String] { budget.withLock { $0.admit(line, at: .now) } }
}
