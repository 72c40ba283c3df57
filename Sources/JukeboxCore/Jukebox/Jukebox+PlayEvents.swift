// The plays that ended, numbered, for a front end that follows them (MQTT's Playback events
// keeps its own count of what it has told).
extension Jukebox {
    /// The plays that ended after play `after` (its `PlayRecord.seq`; 0: from the first kept),
    /// up to `through`, oldest first, once the state holding them is on disk; none when it
    /// cannot be saved. At most the history's length: the oldest of more are gone.
    public func playsEnded(after: UInt64, through: UInt64 = .max) async -> [PlayRecord] {
        let plays = Array(await queue.history.filter { $0.seq > after && $0.seq <= through })
        guard !plays.isEmpty else { return [] }
        do {
            try await saveNow()
        } catch {
            return []
        }
        return plays
    }

    /// The last play that has ended so far (its `PlayRecord.seq`; 0: none).
    public func lastPlay() async -> UInt64 { await queue.history.last?.seq ?? 0 }

    /// The last play of earlier runs, as the saved state had it: a follower that starts
    /// afresh tells what ended since (a fixed time found missed at the start among them).
    public func lastPlayOfEarlierRuns() async -> UInt64 { await queue.lastPlayRestored }
}
