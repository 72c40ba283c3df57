import JukeboxProtocol
import Testing
@testable import jukebox

/// The client's short forms: a place in a clip to the tenth, a finished clip no longer said to
/// go on, and `clips` in columns that line up.
@Suite("The client's output")
struct FormatTests {
    @Test func aPlaceInAClipIsShownToTheTenth() {
        #expect(Format.position(0.5) == "0:00.5")
        #expect(Format.position(12) == "0:12")
        #expect(Format.position(61.25) == "1:01.3")
        #expect(Format.position(59.96) == "1:00")
    }

    @Test func aFinishedClipIsNotSaidToGoOn() {
        let entry = EntryInfo(ticket: 7, clip: "stretch", title: "Stretch", file: "stretch.wav", origin: "scheduler", resumeAt: 0.5)
        #expect(Format.details(entry) == " cut, goes on from 0:00.5")
        #expect(Format.details(entry, ended: true) == "")
    }

    @Test func columnsLineUp() {
        let text = Format.columns([["water", "\"Drink some water\"", "0:02", "window open"], ["eyes", "\"Rest\"", "0:04", "only at its times"]])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines == [
            #"water  "Drink some water"  0:02  window open"#,
            #"eyes   "Rest"              0:04  only at its times"#,
        ])
    }
}
