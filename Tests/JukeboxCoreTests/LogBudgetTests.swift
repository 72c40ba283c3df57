import JukeboxCore
import JukeboxTestSupport
import Logging
import Testing
import JukeboxCoreTestSupport

/// What outsiders can cause as fast as they like is logged a few lines a window, then counted.
@Suite("Log budget")
struct LogBudgetTests {
    @Test func linesUpToTheBudgetAreWrittenTheRestCountedAndTheCountToldAfterTheWindow() {
        var budget = LogBudget(what: "refused MQTT commands", maxLines: 3, window: .seconds(60))
        let start = ContinuousClock.now
        // Under and at the budget: written.
        #expect(budget.admit("one", at: start) == ["one"])
        #expect(budget.admit("two", at: start + .seconds(1)) == ["two"])
        #expect(budget.admit("three", at: start + .seconds(2)) == ["three"])
        // Over it: counted, not written, for the rest of the window.
        for second in 3..<59 { #expect(budget.admit("more", at: start + .seconds(second)).isEmpty) }
        // The next window opens with the count, then the line.
        #expect(budget.admit("next", at: start + .seconds(60)) == [
            "56 more refused MQTT commands were not logged one by one (at most 3 lines every 1m)", "next",
        ])
        #expect(budget.admit("again", at: start + .seconds(61)) == ["again"], "nothing more to count")
    }
}

/// The tests' log collector: a wait for a line that never comes ends when its task is
/// cancelled (as a test past its time limit is), so such a test fails instead of hanging.
@Suite("Log collector", .timeLimit(.minutes(1)))
struct LogCollectorTests {
    @Test func aWaitForALineThatNeverComesEndsWhenCancelled() async {
        let log = LogCollector()
        let waiting = Task { await log.waitFor("never logged") }
        waiting.cancel()
        await waiting.value
        let logged = Task { await log.waitFor("logged") }
        Logger(label: "t") { _ in log }.info("now logged")
        await logged.value
        #expect(log.contains("now logged") && !log.contains("never"))
    }
}
