// The plays a follower tells of once each (MQTT's Playback events): what ended since it last
// told, numbered, and on disk before it is handed out.
extension Jukebox {
    /// The plays that ended after the last one told of (`markPlayEventsTold`), up to
    /// `through`, oldest first, once the state holding them is on disk; none when it cannot
    /// be saved. At most the history's length.
    public func playsToTell(through: UInt64) async -> [PlayRecord] {
        let told = await queue.playEventsTold
        let plays = Array(await queue.history.filter { $0.seq > told && $0.seq <= through })
        guard !plays.isEmpty else { return [] }
        // Plays that ended while nobody was told, more than the history keeps: said once, as
        // the follower goes on from the oldest it can still tell.
        if told > 0, let first = plays.first, first.seq > told + 1, !missedPlaysLogged.contains(first.seq) {
            missedPlaysLogged.insert(first.seq)
            logger.warning("\(Plural.count(Int(first.seq - told - 1), "play")) ended while MQTT could not be told, more than the \(ClipPlayQueue.historyLimit) the history keeps; the oldest of them are not told as Playback events")
        }
        do {
            try await saveNow()
        } catch {
            return []
        }
        return plays
    }

    /// The last play that has ended so far (its `PlayRecord.seq`; 0: none).
    public func lastPlay() async -> UInt64 { await queue.history.last?.seq ?? 0 }

    /// Every play up to `seq` has been told of; saved with the state, so none is told again
    /// after a restart.
    public func markPlayEventsTold(through seq: UInt64) async {
        await queue.markPlayEventsTold(through: seq)
        await saveNowOrLog()
    }
}
