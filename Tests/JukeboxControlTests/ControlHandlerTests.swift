import JukeboxControl
import JukeboxCore
import JukeboxProtocol
import Testing

@Suite("Control requests and responses", .timeLimit(.minutes(1)))
struct ControlHandlerTests {
    let control = InMemoryControl()
    var handler: ControlHandler { ControlHandler(control: control, client: "client 7") }

    func reply(_ text: String) async -> String? {
        await handler.handle(Array(text.utf8)).line.map { String(decoding: $0, as: UTF8.self) }
    }

    func call(_ method: String, _ params: String? = nil, id: Int = 1) async -> String? {
        await reply(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)""# + (params.map { #","params":\#($0)"# } ?? "") + "}")
    }

    @Test func enqueueAnswersTicketsAndPositions() async {
        #expect(await call("enqueue", #"{"clips":["ward","water"],"cue":true}"#) ==
            #"{"id":1,"jsonrpc":"2.0","result":{"entries":[{"clip":"ward","file":"ward.wav","origin":"client 7","position":1,"ticket":1,"title":"ward"},{"clip":"water","file":"water.wav","origin":"client 7","position":2,"ticket":2,"title":"water"}]}}"#)
        #expect(await control.calls == ["enqueue ward,water cue=true from client 7"])
        _ = await call("enqueue", #"{"clips":["walk"],"client":"gpio-button"}"#)
        #expect(await control.calls.last == "enqueue walk cue=false from gpio-button")
    }

    @Test(arguments: [
        ("queue", nil, #"{"id":1,"jsonrpc":"2.0","result":{"waiting":[]}}"#),
        ("status", nil, #"{"id":1,"jsonrpc":"2.0","result":{"device":"fake","deviceState":"ok","failed":0,"paused":false,"played":0,"queueLength":0,"session":"test","uptime":1,"volume":100}}"#),
        ("skip", nil, #"{"id":1,"jsonrpc":"2.0","result":{}}"#),
        ("remove", #"{"tickets":[4]}"#, #"{"id":1,"jsonrpc":"2.0","result":{"notWaiting":[4],"removed":[]}}"#),
        ("clear", nil, #"{"id":1,"jsonrpc":"2.0","result":{"notWaiting":[],"removed":[]}}"#),
        ("pause", nil, #"{"id":1,"jsonrpc":"2.0","result":{"paused":true}}"#),
        ("resume", nil, #"{"id":1,"jsonrpc":"2.0","result":{"paused":false}}"#),
        ("pick", nil, #"{"id":1,"jsonrpc":"2.0","result":{}}"#),
        ("history", #"{"limit":5}"#, #"{"id":1,"jsonrpc":"2.0","result":{"plays":[]}}"#),
        ("volume", #"{"level":40}"#, #"{"id":1,"jsonrpc":"2.0","result":{"volume":40}}"#),
        ("volume", nil, #"{"id":1,"jsonrpc":"2.0","result":{"volume":100}}"#),
        ("reload", nil, #"{"id":1,"jsonrpc":"2.0","result":{"clips":3,"session":"test"}}"#),
        ("subscribe", nil, #"{"id":1,"jsonrpc":"2.0","result":{"subscribed":true}}"#),
    ])
    func everyMethodAnswers(method: String, params: String?, expected: String) async {
        #expect(await call(method, params) == expected)
    }

    @Test func clipsListsTheSession() async {
        let answer = await call("clips")
        #expect(answer?.hasPrefix(#"{"id":1,"jsonrpc":"2.0","result":{"clips":[{"duration":1,"enabled":true,"file":"walk.wav","id":"walk""#) == true)
    }

    @Test func subscribeAsksTheServerToForwardEvents() async {
        #expect(await handler.handle(Array(#"{"jsonrpc":"2.0","id":"s","method":"subscribe"}"#.utf8)).subscribe)
        #expect(await !handler.handle(Array(#"{"jsonrpc":"2.0","id":"s","method":"status"}"#.utf8)).subscribe)
    }

    @Test func stringIdsAreEchoed() async {
        #expect(await reply(#"{"jsonrpc":"2.0","id":"abc","method":"pause"}"#) == #"{"id":"abc","jsonrpc":"2.0","result":{"paused":true}}"#)
    }

    @Test func notificationsAreCarriedOutButNotAnswered() async {
        #expect(await reply(#"{"jsonrpc":"2.0","method":"pause"}"#) == nil)
        #expect(await control.paused)
    }

    @Test(arguments: [
        ("not json", #"{"error":{"code":-32700,"data":{"reason":"parse-error"},"message":"the request is not valid JSON: unexpected character at line 1, column 1"},"id":null,"jsonrpc":"2.0"}"#),
        (#"[{"jsonrpc":"2.0","id":1,"method":"status"}]"#, #"{"error":{"code":-32600,"data":{"reason":"invalid-request"},"message":"a request must be a JSON object (batches are not supported)"},"id":null,"jsonrpc":"2.0"}"#),
        (#"{"id":1,"method":"status"}"#, #"{"error":{"code":-32600,"data":{"reason":"invalid-request"},"message":"\"jsonrpc\" must be \"2.0\""},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":7}"#, #"{"error":{"code":-32600,"data":{"reason":"invalid-request"},"message":"\"method\" must be a string"},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":[1],"method":"status"}"#, #"{"error":{"code":-32600,"data":{"reason":"invalid-request"},"message":"\"id\" must be a string or a whole number"},"id":null,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"dance"}"#, #"{"error":{"code":-32601,"data":{"reason":"unknown-method"},"message":"unknown method \"dance\""},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"status","params":[1]}"#, #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"params\" must be an object"},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"status","params":{"verbose":true}}"#, #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"status has no parameter \"verbose\" (it takes none)"},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"clips":"ward"}}"#, #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"clips\" must be a list of strings"},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"clips":[]}}"#, #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"clips\" must name at least one clip"},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"clips":["ward"],"cue":"yes"}}"#, #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"cue\" must be true or false, not \"yes\""},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"remove","params":{"tickets":["3"]}}"#, #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"tickets\" must be a list of ticket numbers, not \"3\""},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"remove","params":{}}"#, #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"tickets\" must be a list of ticket numbers"},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"volume","params":{"level":101}}"#, #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"level\" must be a whole number from 0 to 100, not 101"},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"history","params":{"limit":0}}"#, #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"limit\" must be a whole number from 1 to 200, not 0"},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"clips":["wrd"]}}"#, #"{"error":{"code":-32001,"data":{"clip":"wrd","reason":"unknown-clip","suggestions":["ward"]},"message":"no clip \"wrd\" in the session (did you mean \"ward\"?)"},"id":1,"jsonrpc":"2.0"}"#),
    ])
    func errors(request: String, expected: String) async {
        #expect(await reply(request) == expected)
    }

    @Test func nonUTF8IsAParseError() async {
        let answer = await handler.handle([0x7B, 0xFF, 0xFE, 0x7D]).line.map { String(decoding: $0, as: UTF8.self) }
        #expect(answer == #"{"error":{"code":-32700,"data":{"reason":"parse-error"},"message":"the request is not valid UTF-8"},"id":null,"jsonrpc":"2.0"}"#)
    }

    @Test func queueFullAndInvalidReloadKeepTheirReasons() async {
        await control.setCapacity(1)
        #expect(await call("enqueue", #"{"clips":["ward","water"]}"#)?.contains(#""reason":"queue-full""#) == true)
        await control.setReloadProblems(["s.json: volume: 3 is out of range (expected 0 to 1)"])
        #expect(await call("reload") == #"{"error":{"code":-32005,"data":{"problems":["s.json: volume: 3 is out of range (expected 0 to 1)"],"reason":"session-invalid"},"message":"the session file was not reloaded; the running session is unchanged:\ns.json: volume: 3 is out of range (expected 0 to 1)"},"id":1,"jsonrpc":"2.0"}"#)
    }

    @Test func changesAreCommittedBeforeTheyAreAnswered() async {
        _ = await call("enqueue", #"{"clips":["ward"]}"#)
        _ = await call("status")
        _ = await call("volume", #"{"level":3}"#)
        _ = await call("volume")
        #expect(await control.commits == [1, 2], "enqueue and setting the volume are committed; reads are not")
        let deferred = await handler.handleDeferringCommit(Array(#"{"jsonrpc":"2.0","id":5,"method":"clear"}"#.utf8))
        #expect(deferred.commitMark == 3)
        #expect(await control.commits == [1, 2], "the caller commits deferred replies")
    }

    @Test func aFailedSaveIsReportedNotHidden() async {
        await control.setFailCommits(true)
        #expect(await call("pause") == #"{"error":{"code":-32006,"data":{"reason":"state-not-saved"},"message":"the change was made but could not be saved, so it would not survive a restart: the state file could not be written (see the daemon's log)"},"id":1,"jsonrpc":"2.0"}"#)
    }

    @Test func eventsBecomeNotifications() {
        let entry = QueueEntry(ticket: 3, clip: PlayableClip(id: "ward", source: ClipSource(file: "ward.wav", path: "/c/ward.wav")), origin: .scheduler)
        #expect(String(decoding: JukeboxEvent.finished(entry, .failed(reason: "ward.wav: no such file")).notificationLine, as: UTF8.self) ==
            #"{"jsonrpc":"2.0","method":"finished","params":{"entry":{"clip":"ward","file":"ward.wav","origin":"scheduler","ticket":3,"title":"ward"},"outcome":"failed","reason":"ward.wav: no such file"}}"#)
        #expect(String(decoding: JukeboxEvent.paused.notificationLine, as: UTF8.self) == #"{"jsonrpc":"2.0","method":"paused","params":{}}"#)
    }
}

extension ControlHandlerTests {
    /// `client` is copied into every entry and the state file: 64 characters at most.
    @Test func clientNamesAreLimitedToSixtyFourCharacters() async {
        let atLimit = String(repeating: "k", count: 64)
        #expect(await call("enqueue", #"{"clips":["ward"],"client":"\#(atLimit)"}"#)?.contains(#""origin":"\#(atLimit)""#) == true)
        #expect(await call("enqueue", #"{"clips":["ward"],"client":"\#(atLimit)k"}"#)
            == #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"client\" must be a name of 1 to 64 characters"},"id":1,"jsonrpc":"2.0"}"#)
        #expect(await call("enqueue", #"{"clips":["ward"],"client":""}"#)?.contains("invalid-params") == true)
        #expect(await control.calls.count == 1, "the refused requests queued nothing")
    }

    @Test func duplicateKeysInARequestAreRefused() async {
        let answer = await reply(#"{"jsonrpc":"2.0","id":1,"method":"status","method":"skip"}"#)
        #expect(answer?.contains(#"duplicate key \"method\""#) == true, "\(answer ?? "")")
        #expect(await control.calls.isEmpty)
    }
}
