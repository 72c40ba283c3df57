import Foundation
import JukeboxTestSupport
import Testing
import JukeboxCoreTestSupport

/// A test that runs past its time limit is cancelled. Waiting for blocking work used to
/// force-unwrap the result of a cancelled wait and take the whole test process down with it.
@Suite("Blocking work off the pool")
struct ThreadTaskTests {
    @Test func aCancelledWaitThrowsAndTheWorkRunsOnToItsEnd() async throws {
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let work = ThreadTask { () -> Int in
            release.wait()
            finished.signal()
            return 7
        }
        let waiting = Task { try await work.value }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        release.signal()
        // The thread still ends, so nothing is left blocked behind the test.
        finished.wait()
        #expect(try await ThreadTask { 3 }.value == 3, "an uncancelled wait gets the result")
    }
}
