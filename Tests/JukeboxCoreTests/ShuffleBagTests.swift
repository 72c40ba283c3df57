import JukeboxCore
import Testing
import JukeboxCoreTestSupport

@Suite("Shuffle bag", .timeLimit(.minutes(1)))
struct ShuffleBagTests {
    @Test(arguments: 0..<20)
    func everyItemOncePerCycle(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var bag = ShuffleBag(weights: Array(repeating: 1, count: 7))
        var picks: [Int] = []
        for _ in 0..<(7 * 6) { picks.append(bag.next(isEligible: { _ in true }, using: &generator)!) }
        for cycle in 0..<6 {
            #expect(Set(picks[(cycle * 7)..<(cycle * 7 + 7)]) == Set(0..<7), "cycle \(cycle): \(picks)")
        }
        #expect(bag.cycle == 6)
    }

    @Test(arguments: 0..<50)
    func newCycleNeverStartsWithThePreviousPick(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var bag = ShuffleBag(weights: [1, 1, 1])
        var previous: Int?
        for _ in 0..<60 {
            let pick = bag.next(isEligible: { _ in true }, using: &generator)!
            #expect(pick != previous)
            previous = pick
        }
    }

    @Test func weightsGiveTicketsPerCycle() {
        var generator = SeededGenerator(seed: 42)
        var bag = ShuffleBag(weights: [3, 1, 2])
        for _ in 0..<10 {
            var counts = [0, 0, 0]
            for _ in 0..<6 { counts[bag.next(isEligible: { _ in true }, using: &generator)!] += 1 }
            #expect(counts == [3, 1, 2])
        }
    }

    @Test func singleEligibleItemRepeats() {
        var generator = SeededGenerator(seed: 1)
        var bag = ShuffleBag(weights: [1])
        #expect((0..<3).map { _ in bag.next(isEligible: { _ in true }, using: &generator) } == [0, 0, 0])
        var mixed = ShuffleBag(weights: [1, 1])
        #expect((0..<4).map { _ in mixed.next(isEligible: { $0 == 1 }, using: &generator) } == [1, 1, 1, 1])
    }

    @Test func itemOutsideItsWindowKeepsItsTicket() {
        var generator = SeededGenerator(seed: 9)
        var bag = ShuffleBag(weights: [1, 1, 1, 1])
        var nightOpen = false
        let eligible: (Int) -> Bool = { $0 != 3 || nightOpen }
        // During the day items 0–2 play once each; item 3 waits in the bag.
        let day = (0..<3).map { _ in bag.next(isEligible: eligible, using: &generator)! }
        #expect(Set(day) == [0, 1, 2])
        #expect(bag.remaining == [3])
        // A new cycle starts for the day items while item 3 still owes its play…
        let nextDay = (0..<3).map { _ in bag.next(isEligible: eligible, using: &generator)! }
        #expect(Set(nextDay) == [0, 1, 2])
        #expect(bag.remaining.filter { $0 == 3 }.count == 1, "item 3 never gets a second ticket")
        // …and it plays as soon as its window opens.
        nightOpen = true
        #expect(bag.next(isEligible: eligible, using: &generator) == 3)
    }

    @Test func nothingEligibleReturnsNilWithoutStartingACycle() {
        var generator = SeededGenerator(seed: 3)
        var bag = ShuffleBag(weights: [1, 1])
        #expect(bag.next(isEligible: { _ in false }, using: &generator) == nil)
        #expect(bag.cycle == 0)
    }

    @Test func sameSeedSameOrder() {
        func run(_ seed: UInt64) -> [Int] {
            var generator = SeededGenerator(seed: seed)
            var bag = ShuffleBag(weights: Array(repeating: 1, count: 10))
            return (0..<30).map { _ in bag.next(isEligible: { _ in true }, using: &generator)! }
        }
        #expect(run(7) == run(7))
        #expect(run(7) != run(8))
    }

    @Test func restoredBagContinuesItsCycle() {
        var generator = SeededGenerator(seed: 5)
        var bag = ShuffleBag(weights: [1, 1, 1, 1])
        let first = (0..<2).map { _ in bag.next(isEligible: { _ in true }, using: &generator)! }
        var restored = ShuffleBag(weights: bag.weights, remaining: bag.remaining, lastPick: bag.lastPick, cycle: bag.cycle)
        let rest = (0..<2).map { _ in restored.next(isEligible: { _ in true }, using: &generator)! }
        #expect(Set(first + rest) == [0, 1, 2, 3])
    }

    @Test func largeBagPicksStayCheap() {
        var generator = SeededGenerator(seed: 11)
        var bag = ShuffleBag(weights: Array(repeating: 1, count: 100_000))
        var seen = Set<Int>()
        for _ in 0..<100_000 { seen.insert(bag.next(isEligible: { _ in true }, using: &generator)!) }
        #expect(seen.count == 100_000)
    }
}
