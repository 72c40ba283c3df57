@testable import JukeboxCore
import Testing

/// What a device check says of a name that is not there: the name meant, when one is close,
/// and the devices there are; no guess for a name too long to be a slip (at, under and over
/// the limit), so a session file's huge name costs nothing.
@Suite("A device that is not there, in words")
struct DeviceCheckWordsTests {
    @Test func theNameMeantIsGuessedForNamesUpToTheLimit() {
        let limit = DeviceCheck.maxGuessedNameLength
        let known = ["null", String(repeating: "d", count: limit), String(repeating: "e", count: limit + 1)]
        // Under and at: one letter off is guessed.
        #expect(DeviceCheck.hint(for: "nul", known: known).hasPrefix("did you mean null? the devices here are null, "))
        let atLimit = String(repeating: "d", count: limit - 1) + "x"
        #expect(DeviceCheck.hint(for: atLimit, known: known).hasPrefix("did you mean \(known[1])? "))
        // Over: no guess, the devices there are all the same.
        let over = String(repeating: "e", count: limit) + "x"
        #expect(DeviceCheck.hint(for: over, known: known).hasPrefix("the devices here are null, "))
        let huge = String(repeating: "x", count: 1 << 20)
        #expect(DeviceCheck.hint(for: huge, known: known).hasPrefix("the devices here are "))
    }

    @Test func atMostTwelveAreNamed() {
        let known = (1...15).map { "card\($0)" }
        let hint = DeviceCheck.hint(for: "speaker", known: known)
        #expect(hint.contains("card12 and 3 more (`aplay -L` lists them all)"), "\(hint)")
        #expect(!hint.contains("card13"))
        #expect(DeviceCheck.hint(for: "x", known: []).hasPrefix("ALSA lists no device that plays here"))
    }
}
