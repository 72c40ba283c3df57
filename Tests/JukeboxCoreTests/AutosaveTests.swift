@testable import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxTestSupport
import Testing

/// What the daemon saves by itself, from its own events: among them a clip cut by an urgent
/// one while paused, after which nothing plays to save it (its `cut` event waits for a save).
@Suite("The state saved by itself", .timeLimit(.minutes(1)))
struct AutosaveTests {
    @Test(arguments: ["cut", "playing", "paused"])
    func anEventIsSavedByItselfOrNot(_ name: String) async throws {
        let test = try await TestCore()
        let entry = QueueEntry(ticket: 1, clip: Fixtures.clip("walk"), origin: .scheduler)
        let event: JukeboxEvent = switch name {
        case "cut": .cut(entry, position: 2)
        case "playing": .playing(entry)
        default: .paused
        }
        let writer = StateWriter(file: StateFile(path: test.folder.file("state.json"))) { PersistedState(nextTicket: 1) }
        let (changes, feed) = AsyncStream<JukeboxEvent>.makeStream()
        feed.yield(event)
        feed.finish()
        await test.core.save(changes, with: writer)
        // Pause is a command: saved before it is answered, not here.
        #expect(await writer.writes == (name == "paused" ? 0 : 1))
    }
}
