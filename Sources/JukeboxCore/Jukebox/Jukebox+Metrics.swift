/// Counts of values in ranges, as Prometheus' histograms give them: how many were at most each
/// bound, their sum and their count.
public struct Histogram: Sendable, Equatable {
    /// Upper bounds, rising; a last bucket above them all (+Inf) is implied.
    public let bounds: [Double]
    /// How many fell in each bucket (not cumulative), the one above every bound last.
    public private(set) var counts: [Int]
    public private(set) var sum = 0.0
    public private(set) var count = 0

    /// A state write: an fsync of a small file is a few milliseconds on an SD card, a slow or
    /// failing card seconds.
    public static let stateWriteBounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    public init(bounds: [Double]) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count + 1)
    }

    public mutating func observe(_ value: Double) {
        guard value.isFinite else { return }
        counts[bounds.firstIndex { value <= $0 } ?? bounds.count] += 1
        sum += value
        count += 1
    }

    /// For each bound, how many were at most it.
    public var cumulative: [Int] {
        var total = 0
        return counts.dropLast().map { total += $0; return total }
    }
}

/// What `/metrics` shows of the core, read at one moment.
public struct JukeboxMetrics: Sendable {
    /// Entries that ended since the daemon started, by how (`completed`, `skipped`, `failed`,
    /// `ended-early`).
    public var outcomes: [String: Int]
    /// Fixed times that did not play within their grace.
    public var missed: Int
    public var queueLength: Int
    /// False while the device is missing and retried.
    public var deviceUp: Bool
    /// When the last clip began (seconds since the epoch); nil before the first.
    public var lastPlayStarted: Double?
    public var stateWrites: Histogram?
    /// Clients following the events now.
    public var clients: Int
    /// The day plans' calendars: how long ago each was last read or found unchanged (nil:
    /// not yet since the start), and the reads that failed.
    public var calendars: [(name: String, age: Double?, failures: Int)] = []
    /// The session's alerts, in its order, and whether each is on.
    public var alerts: [(name: String, on: Bool)] = []
}

extension Jukebox {
    public func metrics() async -> JukeboxMetrics {
        let now = await queue.snapshot()
        let device = await player.device
        let deviceUp = if case .retrying = device { false } else { true }
        let lastPlay = now.currentStartedAt ?? now.history.last?.startedAt
        var metrics = JukeboxMetrics(
            outcomes: await queue.outcomes, missed: await queue.missedCount, queueLength: now.waiting.count, deviceUp: deviceUp,
            lastPlayStarted: lastPlay, stateWrites: await writer?.writeTimes, clients: events.subscriberCount)
        let wall = configuration.time.wallClock()
        metrics.calendars = await calendars.states.map { ($0.name, $0.readAt.map { max(wall - Double($0), 0) }, $0.failures) }
        metrics.alerts = catalog.session.alerts.map { ($0.name, $0.name == now.alert?.name) }
        return metrics
    }
}
