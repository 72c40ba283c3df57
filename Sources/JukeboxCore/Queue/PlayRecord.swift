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
