import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// The sound test on another device than the session's, on the manual clock: a device that
/// never answers is given up on at the limit, never before, and keeps the one test slot until
/// it answers; a name the vetting refuses is never opened.
extension JukeboxTests {
    @Test func aDeviceThatNeverAnswersIsGivenUpOnAtTheLimitAndKeepsTheSlotUntilItAnswers() async throws {
        let decoder = Fixtures.decoder([("a", 1, 100)])
        let core = make(ClipCatalog(session: session([clip("a")])), decoder: decoder, vetClientDevice: { _ in nil })
        let hung = outputs["two"]!
        await hung.holdDrains()
        let first = Task { () -> JukeboxError? in
            do throws(JukeboxError) { _ = try await core.soundTest(device: "two") } catch { return error }
            return nil
        }
        // The limit's sleeper, and the tone held in the device's drain.
        await clock.waitForSleeper(until: clock.now.advanced(by: Jukebox.soundTestLimit))
        await hung.wait { $0.contains(where: { if case .open = $0 { true } else { false } }) }
        // Under the limit: still waiting, and a second test is told the slot is taken.
        clock.advance(by: Jukebox.soundTestLimit - .milliseconds(1))
        await #expect(throws: JukeboxError.soundTestBusy) { try await core.soundTest(device: "two") }
        await #expect(throws: JukeboxError.soundTestBusy) { try await core.soundTest(device: nil) }
        // At the limit: the answer, in words.
        clock.advance(by: .milliseconds(1))
        let answer = try #require(await first.value)
        guard case .soundTestFailed(let problem) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(problem.code == AudioDeviceError.Code.stalled)
        #expect("\(answer)".contains("did not answer within 30s"), "\(answer)")
        // Over it, the device still has not answered: the slot stays taken.
        clock.advance(by: .seconds(60))
        await #expect(throws: JukeboxError.soundTestBusy) { try await core.soundTest(device: "two") }
        // Once it answers, the slot is free and the next test plays.
        await hung.releaseDrains()
        while await core.soundTestRunning { await Task.yield() }
        let next = try await core.soundTest(device: "two")
        #expect(next.device == "two")
    }

    @Test func aRefusedNameIsNeverOpened() async throws {
        let decoder = Fixtures.decoder([("a", 1, 100)])
        let core = make(ClipCatalog(session: session([clip("a")])), decoder: decoder, vetClientDevice: { name in name == "two" ? "it writes a file" : nil })
        await #expect(throws: JukeboxError.deviceRefused(device: "two", reason: "it writes a file")) { try await core.soundTest(device: "two") }
        #expect(await outputs["two"]!.events.isEmpty, "nothing opened")
        // Without a vetting, only the session's own device.
        let unvetted = make(ClipCatalog(session: session([clip("a")])), decoder: decoder)
        await #expect(throws: JukeboxError.self) { try await unvetted.soundTest(device: "two") }
        #expect(await outputs["two"]!.events.isEmpty, "nothing opened")
        // The slot is free again after a refusal.
        #expect(await !core.soundTestRunning)
    }
}
