import ArgumentParser
import JukeboxProtocol
import Testing
@testable import jukebox

/// The quick path runs the commonest commands without ArgumentParser: it must know them by
/// the names ArgumentParser gives them, and write the requests ArgumentParser's path would.
@Suite("The client's quick path")
struct QuickPathTests {
    @Test func everyArgumentlessCommandIsKnownByItsOwnName() {
        let commands: [any ParsableCommand.Type] = [
            JukeboxCLI.Status.self, JukeboxCLI.Clips.self, JukeboxCLI.Skip.self, JukeboxCLI.Pause.self, JukeboxCLI.Resume.self,
            JukeboxCLI.Pick.self, JukeboxCLI.Reload.self, JukeboxCLI.QueueCommand.self, JukeboxCLI.Clear.self,
        ]
        #expect(commands.map { $0.configuration.commandName ?? "" } == QuickCommand.argumentlessNames)
        #expect(QuickCommand.argumentlessNames.allSatisfy { QuickCommand.argumentless($0) != nil })
        #expect(QuickCommand.argumentless("history") == nil, "a command with options of its own goes to ArgumentParser")
        #expect(JukeboxCLI.Play.configuration.commandName == "play")
    }

    @Test func commandLinesItDoesNotKnowGoToArgumentParser() {
        #expect(QuickCommand(["status"]) != nil)
        #expect(QuickCommand(["--socket", "/tmp/s", "--json", "play", "a", "b", "--cue", "--client", "door"]) != nil)
        #expect(QuickCommand(["status", "--help"]) == nil)
        #expect(QuickCommand(["stauts"]) == nil)
        #expect(QuickCommand(["play"]) == nil, "play needs a clip")
        #expect(QuickCommand(["play", "a", "--client"]) == nil)
        #expect(QuickCommand(["--socket", "--json", "status"]) == nil)
        #expect(QuickCommand(["play", "--now", "bell"]) != nil, "an urgent play is quick too")
        #expect(QuickCommand(["play", "bell", "--now", "--now"]) == nil)
    }

    @Test func playNowAsksForAnUrgentEntry() throws {
        let text = JSONValue.object(JukeboxCLI.Play.params(clips: ["bell"], cue: false, client: nil, now: true)).text
        #expect(text == #"{"clips":["bell"],"cue":false,"now":true}"#)
        guard case .play(let play)? = QuickCommand(["play", "--now", "bell", "--cue"])?.command else {
            Issue.record("not read as play")
            return
        }
        #expect(play.clips == ["bell"] && play.now && play.cue && play.client == nil)
        #expect(throws: (any Error).self) { try JukeboxCLI.Play.parse(["bell", "--now", "--after-quiet"]) }
    }

    @Test(arguments: [
        (["water"], false, nil as String?, #"{"clips":["water"],"cue":false}"#),
        (["a", "b"], true, "door bell", #"{"client":"door bell","clips":["a","b"],"cue":true}"#),
        ([#"say "hi"\"#, "tab\there", "\u{1}"], false, "ü", #"{"client":"ü","clips":["say \"hi\"\\","tab\there","\u0001"],"cue":false}"#),
    ])
    func playsParametersAreTheJSONTheDaemonReads(clips: [String], cue: Bool, client: String?, expected: String) throws {
        let text = JSONValue.object(JukeboxCLI.Play.params(clips: clips, cue: cue, client: client)).text
        #expect(text == expected)
        let parsed = try JSONParser.parse(Array(text.utf8))
        var members: [String: JSONValue] = ["clips": .array(clips.map(JSONValue.string)), "cue": .bool(cue)]
        if let client { members["client"] = .string(client) }
        #expect(parsed == .object(members))
    }
}
