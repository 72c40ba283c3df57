#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One finished play, for `history`.
public struct PlayRecord: Sendable, Equatable {
    public var entry: QueueEntry
    /// Seconds since the Unix epoch.
    public var startedAt: Double
    public var outcome: PlayOutcome

    public init(entry: QueueEntry, startedAt: Double, outcome: PlayOutcome) {
        self.entry = entry
        self.startedAt = startedAt
        self.outcome = outcome
    }
}

/// How often and when a clip has played, for `clips`.
public struct ClipStats: Sendable, Equatable, Codable {
    public var timesPlayed = 0
    /// Seconds since the Unix epoch.
    public var lastPlayed: Double?

    public init(timesPlayed: Int = 0, lastPlayed: Double? = nil) {
        self.timesPlayed = timesPlayed
        self.lastPlayed = lastPlayed
    }
}

/// The queue refused an entry because `capacity` entries are already waiting.
public struct QueueFullError: Error, Sendable, Equatable, CustomStringConvertible {
    public var capacity: Int
    public init(capacity: Int) { self.capacity = capacity }
    public var description: String { "the queue is full (\(capacity) clips waiting); try again later or clear it" }
}

/// Seconds since the Unix epoch, for timestamps people read (history, next pick).
public typealias WallClock = @Sendable () -> Double

public enum SystemWallClock {
    public static let now: WallClock = {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
