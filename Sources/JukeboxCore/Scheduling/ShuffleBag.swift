/// A weighted shuffle bag over items `0..<weights.count`.
///
/// Each cycle holds `weights[i]` tickets for item `i`; every pick removes one ticket, so every
/// item plays its share before any item repeats. Items that are not eligible right now (a
/// closed time window) keep their tickets for later in the cycle. A new cycle starts only when
/// no remaining ticket is eligible, and its first pick is never the previous pick unless that
/// is the only eligible item. Picks are O(1) amortised when most items are eligible.
public struct ShuffleBag: Sendable, Equatable {
    public private(set) var weights: [Int]
    /// Tickets left in this cycle; picks scan from the end.
    public private(set) var remaining: [Int]
    /// How many tickets each item has left, so a refill can skip items still owed a play.
    private var ticketsLeft: [Int]
    public private(set) var lastPick: Int?
    public private(set) var cycle = 0

    public init(weights: [Int]) {
        precondition(weights.allSatisfy { $0 > 0 }, "weights must be positive")
        self.weights = weights
        self.remaining = []
        self.ticketsLeft = Array(repeating: 0, count: weights.count)
    }

    /// Restores a bag mid-cycle (from saved state). Tickets for unknown items are dropped.
    public init(weights: [Int], remaining: [Int], lastPick: Int?, cycle: Int) {
        self.init(weights: weights)
        self.remaining = remaining.filter { weights.indices.contains($0) }
        for item in self.remaining { ticketsLeft[item] += 1 }
        self.lastPick = lastPick.flatMap { weights.indices.contains($0) ? $0 : nil }
        self.cycle = cycle
    }

    /// The next item, or nil when no item is eligible now.
    public mutating func next(
        isEligible: (Int) -> Bool, using generator: inout some RandomNumberGenerator
    ) -> Int? {
        if let position = position(isEligible: isEligible, allowLast: true) {
            return take(at: position)
        }
        guard weights.indices.contains(where: { ticketsLeft[$0] == 0 && isEligible($0) }) else { return nil }
        refill(using: &generator)
        // The first pick of a cycle avoids repeating the last pick whenever anything else can play.
        let position = position(isEligible: isEligible, allowLast: eligibleCount(isEligible) == 1)
        return position.map { take(at: $0) }
    }

    private func position(isEligible: (Int) -> Bool, allowLast: Bool) -> Int? {
        var fallback: Int?
        for position in remaining.indices.reversed() where isEligible(remaining[position]) {
            if remaining[position] != lastPick { return position }
            if fallback == nil { fallback = position }
        }
        return allowLast ? fallback : nil
    }

    private func eligibleCount(_ isEligible: (Int) -> Bool) -> Int {
        var count = 0
        for item in weights.indices where isEligible(item) {
            count += 1
            if count > 1 { break }
        }
        return count
    }

    private mutating func take(at position: Int) -> Int {
        let item = remaining[position]
        remaining.swapAt(position, remaining.count - 1)
        remaining.removeLast()
        ticketsLeft[item] -= 1
        lastPick = item
        return item
    }

    private mutating func refill(using generator: inout some RandomNumberGenerator) {
        for item in weights.indices where ticketsLeft[item] == 0 {
            remaining.append(contentsOf: repeatElement(item, count: weights[item]))
            ticketsLeft[item] = weights[item]
        }
        remaining.shuffle(using: &generator)
        cycle += 1
    }
}
