import FoundationEssentials
import JukeboxProtocol
import Testing

/// The client reads its commonest results by hand (`JSONReadable`); the daemon writes them
/// with `Encodable`. Both must agree, field for field, with and without the optional ones.
@Suite("Results read by hand")
struct JSONReadableTests {
    func roundTrip<T: Codable & JSONReadable & Equatable>(_ value: T) throws -> T {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try T(json: JSONParser.parse(Array(try encoder.encode(value))))
    }

    static let entry = EntryInfo(ticket: 7, clip: "water", title: "Drink some water", file: "water.wav", origin: "cli", position: 2)
    static let spoken = EntryInfo(ticket: 9_007_199_254_740, clip: "say", title: "say: Dinner", file: "", origin: "mqtt", say: "Dinner is ready")

    @Test func everyResultReadsBackAsItWasWritten() throws {
        let full = StatusResult(
            session: "Desk \"reminders\"", device: "plughw:CARD=Device,DEV=0", deviceState: "retrying in 2s: busy", playing: Self.entry,
            waitingForDevice: Self.spoken, queueLength: 3, paused: true, volume: 40, nextPick: 1_795_532_639.857, uptime: 178.3, played: 5,
            failed: 1, underruns: 2)
        #expect(try roundTrip(full) == full)
        let bare = StatusResult(session: "s", device: "null", deviceState: "closed", queueLength: 0, paused: false, volume: 100, uptime: 0, played: 0, failed: 0)
        #expect(try roundTrip(bare) == bare)
        #expect(try roundTrip(EnqueueResult(entries: [Self.entry, Self.spoken])) == EnqueueResult(entries: [Self.entry, Self.spoken]))
        #expect(try roundTrip(SkipResult(skipped: Self.entry)) == SkipResult(skipped: Self.entry))
        #expect(try roundTrip(SkipResult()) == SkipResult())
        #expect(try roundTrip(PauseResult(paused: true)) == PauseResult(paused: true))
        #expect(try roundTrip(PickResult(entry: Self.spoken)) == PickResult(entry: Self.spoken))
        #expect(try roundTrip(PickResult()) == PickResult())
        #expect(try roundTrip(ReloadResult(session: "s", clips: 12)) == ReloadResult(session: "s", clips: 12))
        #expect(try roundTrip(RemoveResult(removed: [1, 2], notWaiting: [])) == RemoveResult(removed: [1, 2], notWaiting: []))
        let queue = QueueResult(
            playing: PlayingInfo(entry: Self.entry, elapsed: 1.5, total: 60, startedAt: 1_795_532_000.25, paused: true),
            waitingForDevice: nil, waiting: [Self.spoken, Self.entry])
        #expect(try roundTrip(queue) == queue)
        let waiting = QueueResult(waitingForDevice: Self.entry, waiting: [])
        #expect(try roundTrip(waiting) == waiting)
        let clips = ClipsResult(clips: [
            ClipInfo(id: "water", title: "Drink some water", file: "water.wav", duration: 2.5, enabled: true, windowOpen: false, timesPlayed: 3, lastPlayed: 1_795_532_000),
            ClipInfo(id: "gone", title: "gone", file: "gone.wav", enabled: false, windowOpen: true, timesPlayed: 0, problem: "gone.wav: no such file"),
        ])
        #expect(try roundTrip(clips) == clips)
    }

    /// The results read through `Decodable` go the same way: parsed once, then read.
    @Test func theOtherResultsReadBackThroughDecodable() throws {
        let volume = VolumeResult(volume: 35)
        #expect(try roundTrip(volume) == volume)
        let refusal = RPCError(code: -32013, message: "two uploads are under way; try again in a moment", data: .init(reason: "uploads-busy"))
        #expect(try roundTrip(refusal) == refusal)
        #expect(throws: JSONShapeError(field: "result")) { try VolumeResult(json: .object(["volume": .string("loud")])) }
    }

    /// What the client sends is `JSONValue.text`: JSON that parses back to the same value,
    /// and that `JSONDecoder` reads as the same value too.
    @Test func writtenJSONParsesBackToTheSameValue() throws {
        let value: JSONValue = .object([
            "n": .number(42), "negative": .number(-7), "fraction": .number(0.25), "big": .number(9_007_199_254_740),
            "text": .string("quote \" slash \\ tab \t \u{1} ü"), "list": .array([.null, .bool(true), .bool(false), .array([])]),
            "nested": .object(["empty": .object([:])]),
        ])
        #expect(value.text.hasPrefix(#"{"big":9007199254740,"fraction":0.25,"list":[null,true,false,[]],"n":42,"#))
        #expect(try JSONParser.parse(Array(value.text.utf8)) == value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(value.text.utf8)) == value)
    }

    @Test func aReplyOfTheWrongShapeNamesTheField() {
        #expect(throws: JSONShapeError(field: "volume")) {
            try StatusResult(json: .object(["session": .string("s"), "device": .string("d"), "deviceState": .string("ok"), "queueLength": .number(0),
                                            "paused": .bool(false), "volume": .string("loud"), "uptime": .number(1), "played": .number(0), "failed": .number(0)]))
        }
        #expect(throws: JSONShapeError(field: "ticket")) { try EntryInfo(json: .object(["ticket": .number(-1)])) }
        #expect(throws: JSONShapeError(field: "removed")) { try RemoveResult(json: .object(["removed": .array([.number(1e300)]), "notWaiting": .array([])])) }
        #expect(throws: JSONShapeError(field: "result")) { try PauseResult(json: .array([])) }
    }
}
