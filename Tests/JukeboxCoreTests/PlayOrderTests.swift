import JukeboxCore
import JukeboxCoreTestSupport
import Testing

/// The play order's rules, alone: first come first played, urgent first, a fixed time ahead
/// of picks and requests, a cut clip back after the urgent entries, held requests to the back
/// once released, and the capacity counted over both.
@Suite("Play order")
struct PlayOrderTests {
    var ticket: UInt64 = 0

    mutating func entry(_ origin: QueueEntry.Origin = .client("cli"), urgent: Bool = false, resumeAt: QueueEntry.ResumePoint? = nil) -> QueueEntry {
        ticket += 1
        return QueueEntry(ticket: ticket, clip: Fixtures.clip("c\(ticket)"), origin: origin, urgent: urgent, resumeAt: resumeAt)
    }

    func tickets(_ order: PlayOrder) -> [UInt64] { order.waiting.map(\.ticket) }

    @Test mutating func requestsPlayInTheOrderTheyCame() {
        var order = PlayOrder(capacity: 10)
        let got1 = order.insert([entry()])
        #expect(got1 == [1])
        let got2 = order.insert([entry(.scheduler)])
        #expect(got2 == [2])
        let got3 = order.insert([entry(), entry()])
        #expect(got3 == [3, 4])
        #expect(tickets(order) == [1, 2, 3, 4])
        let got4 = order.next()?.ticket
        #expect(got4 == 1)
        #expect(tickets(order) == [2, 3, 4])
    }

    @Test mutating func urgentEntriesGoFirstInTheirOwnOrderAndARequestOfSeveralStaysTogether() {
        var order = PlayOrder(capacity: 10)
        _ = order.insert([entry(), entry()])
        let got5 = order.insert([entry(urgent: true)])
        #expect(got5 == [1])
        // A request of two urgent clips: after the urgent one before it, both in one step.
        let got6 = order.insert([entry(urgent: true), entry(urgent: true)])
        #expect(got6 == [2, 3])
        #expect(tickets(order) == [3, 4, 5, 1, 2])
    }

    @Test mutating func aFixedTimeGoesAheadOfPicksAndRequestsButNotOfUrgentOrCutClips() {
        var order = PlayOrder(capacity: 10)
        _ = order.insert([entry(urgent: true)])
        _ = order.putBack(entry(resumeAt: .init(frame: 100, seconds: 1)))
        _ = order.insert([entry(.scheduler), entry()])
        let due = order.insert([entry(.fixedTime(1_000))])
        #expect(due == [3])
        let dueLater = order.insert([entry(.fixedTime(1_060))])
        #expect(dueLater == [4], "after the fixed time before it")
        #expect(tickets(order) == [1, 2, 5, 6, 3, 4])
    }

    @Test mutating func aCutClipGoesBackRightAfterTheUrgentEntries() {
        var order = PlayOrder(capacity: 10)
        _ = order.insert([entry(), entry(urgent: true), entry(urgent: true)])
        #expect(tickets(order) == [1, 2, 3])
        var order2 = PlayOrder(capacity: 10)
        _ = order2.insert([entry()])
        _ = order2.insert([entry(urgent: true), entry(urgent: true)])
        let got7 = order2.putBack(entry())
        #expect(got7 == 3)
        #expect(tickets(order2) == [5, 6, 7, 4])
    }

    @Test mutating func heldRequestsGoToTheBackWhenReleasedAndCountTowardsTheCapacity() {
        var order = PlayOrder(capacity: 3)
        order.hold([entry(), entry()])
        #expect(order.hasRoom(for: 1))
        #expect(!order.hasRoom(for: 2), "two held and two more are over three")
        _ = order.insert([entry()])
        #expect(!order.hasRoom(for: 1), "at the capacity")
        let released = order.releaseHeld()
        #expect(released.map(\.position) == [2, 3])
        #expect(tickets(order) == [3, 1, 2])
        #expect(order.held.isEmpty)
    }

    @Test mutating func removingFindsWaitingAndHeldEntries() {
        var order = PlayOrder(capacity: 10)
        _ = order.insert([entry(), entry(.client("web"))])
        order.hold([entry(.client("web"))])
        let got8 = order.remove(ticket: 1)
        #expect(got8)
        let again = order.remove(ticket: 1)
        #expect(!again)
        let removed = order.removeAll { $0.origin == .client("web") }
        #expect(removed == [2, 3])
        #expect(order.isEmpty && order.held.isEmpty)
    }

    @Test mutating func theSavedOrderPutsUrgentEntriesWaitingToCutBeforeTheClipTheyCut() {
        var order = PlayOrder(capacity: 10)
        let playing = entry()
        _ = order.insert([entry()])
        _ = order.insert([entry(urgent: true)])
        #expect(order.persisted(current: playing).map(\.ticket) == [3, 1, 2])
        // An urgent clip playing is not cut by the urgent ones after it.
        var urgentNow = PlayOrder(capacity: 10)
        let playingUrgent = entry(urgent: true)
        _ = urgentNow.insert([entry(urgent: true)])
        #expect(urgentNow.persisted(current: playingUrgent).map(\.ticket) == [4, 5])
        #expect(order.persisted(current: nil).map(\.ticket) == [3, 2])
    }
}
