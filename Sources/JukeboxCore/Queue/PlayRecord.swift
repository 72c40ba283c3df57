/// One finished play, for `history`.
public struct PlayRecord: Sendable, Equatable {
    public var entry: QueueEntry
    /// Seconds since the Unix epoch.
    public var startedAt: Double
    public var outcome: PlayOutcome
    /// Numbers the plays in the order they ended, across restarts, so a follower (the MQTT
    /// Playback events) can tell which it has told of; 0 for one saved before they were.
    public var seq: UInt64

    public init(entry: QueueEntry, startedAt: Double, outcome: PlayOutcome, seq: UInt64 = 0) {
        self.seq = seq
        self.entry = entry
        self.startedAt = startedAt
        self.outcome = outcome
    }
}
