import DequeModule

/// The order entries play in, and nothing else: first come, first played; urgent entries
/// before every other; a fixed time ahead of what was picked or asked for (so nothing waiting
/// makes it later than the clip playing now does); a clip an urgent entry cut back right after
/// the urgent entries; and clients' requests held for the end of quiet hours. A value, so its
/// rules are tested alone; `ClipPlayQueue` keeps one and does the waiting and the playing.
public struct PlayOrder: Sendable {
    /// What waits to play, next first.
    public private(set) var waiting = Deque<QueueEntry>()
    /// Requests to play once quiet hours end (`afterQuiet`), in the order they came. They
    /// count towards `capacity`.
    public private(set) var held = Deque<QueueEntry>()
    /// The most entries waiting and held together.
    public let capacity: Int

    public init(capacity: Int) { self.capacity = capacity }

    public var isEmpty: Bool { waiting.isEmpty }
    public var first: QueueEntry? { waiting.first }

    /// Whether `count` more entries fit, all of them.
    public func hasRoom(for count: Int) -> Bool { waiting.count + held.count + count <= capacity }

    /// Where an entry of this kind goes in `waiting`.
    func place(urgent: Bool, fixedTime: Bool) -> Int {
        if urgent { return waiting.firstIndex { !$0.urgent } ?? waiting.count }
        if fixedTime { return waiting.firstIndex { !$0.urgent && $0.resumeAt == nil && !$0.origin.isFixedTime } ?? waiting.count }
        return waiting.count
    }

    /// Puts the entries of one request in, together and in their order, where the first one's
    /// kind goes: nothing another request adds can come between them. Returns each one's
    /// position (1 = next). The caller has checked `hasRoom`.
    public mutating func insert(_ entries: [QueueEntry]) -> [Int] {
        guard let first = entries.first else { return [] }
        let index = place(urgent: first.urgent, fixedTime: first.origin.isFixedTime)
        waiting.insert(contentsOf: entries, at: index)
        return entries.indices.map { index + $0 + 1 }
    }

    /// Takes the entry at the head, to play it.
    public mutating func next() -> QueueEntry? { waiting.popFirst() }

    /// A clip an urgent entry cut goes back right after the urgent entries; an urgent one
    /// an alert cut goes back first. Returns its position.
    public mutating func putBack(_ entry: QueueEntry) -> Int {
        let index = entry.urgent ? 0 : place(urgent: true, fixedTime: false)
        waiting.insert(entry, at: index)
        return index + 1
    }

    /// Puts an entry before every other (an alert's end clip).
    public mutating func putFirst(_ entry: QueueEntry) { waiting.prepend(entry) }

    public mutating func hold(_ entries: [QueueEntry]) { held.append(contentsOf: entries) }

    /// Moves every held request to the back, in the order they came; returns each with its
    /// position.
    public mutating func releaseHeld() -> [(entry: QueueEntry, position: Int)] {
        let released = Array(held)
        held.removeAll()
        return released.map { entry in
            waiting.append(entry)
            return (entry, waiting.count)
        }
    }

    /// Removes a waiting or held entry; false when it is neither.
    public mutating func remove(ticket: UInt64) -> Bool {
        if let index = waiting.firstIndex(where: { $0.ticket == ticket }) {
            waiting.remove(at: index)
        } else if let index = held.firstIndex(where: { $0.ticket == ticket }) {
            held.remove(at: index)
        } else {
            return false
        }
        return true
    }

    /// Removes every waiting and held entry that `matches`; returns their tickets, waiting first.
    public mutating func removeAll(where matches: (QueueEntry) -> Bool) -> [UInt64] {
        let removed = waiting.filter(matches).map(\.ticket) + held.filter(matches).map(\.ticket)
        waiting.removeAll(where: matches)
        held.removeAll(where: matches)
        return removed
    }

    /// The order to save, with `current` (the entry playing now): it comes first, after a
    /// crash it plays again, except that urgent entries waiting to cut it come before it.
    public func persisted(current: QueueEntry?) -> [QueueEntry] {
        let cutting = current?.urgent == false ? waiting.prefix { $0.urgent } : []
        return Array(cutting) + (current.map { [$0] } ?? []) + Array(waiting.dropFirst(cutting.count))
    }

    /// Puts saved entries back, after any there are, in their order.
    public mutating func restore(waiting entries: some Sequence<QueueEntry>, held: [QueueEntry]) {
        waiting.append(contentsOf: entries)
        self.held.append(contentsOf: held)
    }
}
