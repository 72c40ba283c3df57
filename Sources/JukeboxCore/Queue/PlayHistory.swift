import DequeModule

/// What has played: the last `limit` plays that ended, numbered in the order they ended, and
/// the counts `status`, `clips` and `/metrics` show. A value, kept by `ClipPlayQueue`, which
/// adds each play as it ends.
public struct PlayHistory: Sendable {
    /// Plays kept one by one; older ones are only counted.
    public static let limit = 200

    public private(set) var plays = Deque<PlayRecord>()
    /// The number the next play that ends gets (`PlayRecord.seq`).
    private var nextSeq: UInt64 = 1
    public private(set) var playedCount = 0
    public private(set) var failedCount = 0
    /// Every play that ended since the daemon started, by how (`PlayOutcome.name`).
    public private(set) var outcomes: [String: Int] = [:]
    /// The fixed times among them that missed their time.
    public private(set) var missedCount = 0
    /// Each clip's plays, across restarts.
    public private(set) var stats: [String: ClipStats] = [:]

    public init() {}

    /// The number of the last play that ended (0: none yet).
    public var lastSeq: UInt64 { nextSeq - 1 }
    /// The number of the last play of earlier runs, as the saved state had it.
    public private(set) var lastSeqRestored: UInt64 = 0

    /// `entry`, started at `startedAt` (seconds since 1970), ended with `outcome`: counted,
    /// numbered and added. An announcement is not one of the session's clips, so it is not
    /// in their counts.
    @discardableResult
    public mutating func add(_ entry: QueueEntry, startedAt: Double, outcome: PlayOutcome) -> PlayRecord {
        outcomes[outcome.name, default: 0] += 1
        switch outcome {
        case .completed:
            playedCount += 1
            if entry.clip.speech == nil {
                stats[entry.clip.id, default: ClipStats()].timesPlayed += 1
                stats[entry.clip.id]?.lastPlayed = startedAt
            }
        case .failed, .endedEarly: failedCount += 1
        case .missed: missedCount += 1
        case .stopped, .notPlayed, .heldBack, .alert: break
        }
        let play = PlayRecord(entry: entry, startedAt: startedAt, outcome: outcome, seq: nextSeq)
        nextSeq += 1
        plays.append(play)
        if plays.count > Self.limit { plays.removeFirst() }
        return play
    }

    /// Fixed times missed that are counted only (beyond those listed one by one).
    public mutating func countMissed(_ count: Int) {
        guard count > 0 else { return }
        outcomes["missed", default: 0] += count
        missedCount += count
    }

    /// Takes up what an earlier run saved: the plays keep their numbers, and the next one
    /// follows the last.
    public mutating func restore(plays saved: [PlayRecord], stats: [String: ClipStats]) {
        self.stats = stats
        plays = Deque(saved.suffix(Self.limit))
        nextSeq = max(nextSeq, (saved.map(\.seq).max() ?? 0) + 1)
        lastSeqRestored = lastSeq
    }
}
