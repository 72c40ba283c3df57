import JukeboxCoreTestSupport
import JukeboxCore
import JukeboxDispatch
import JukeboxProtocol
import Testing

@Suite("Control requests and responses", .timeLimit(.minutes(1)))
struct RPCDispatcherTests {
    let fixture: TestCore
    var core: Jukebox { fixture.core }
    var handler: RPCDispatcher { RPCDispatcher(core: core, client: "client 7") }

    init() async throws { fixture = try await TestCore() }

    func reply(_ text: String) async -> String? {
        await handler.handle(Array(text.utf8)).line.map { String(decoding: $0, as: UTF8.self) }
    }

    func call(_ method: String, _ params: String? = nil, id: Int = 1) async -> String? {
        await reply(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)""# + (params.map { #","params":\#($0)"# } ?? "") + "}")
    }

    @Test func enqueueAnswersTicketsAndPositions() async {
        #expect(await call("enqueue", #"{"clips":["ward","water"],"cue":true}"#) ==
            #"{"id":1,"jsonrpc":"2.0","result":{"entries":[{"clip":"ward","file":"ward.wav","origin":"client 7","position":1,"ticket":1,"title":"ward"},{"clip":"water","file":"water.wav","origin":"client 7","position":2,"ticket":2,"title":"water"}]}}"#)
        let waiting = await core.snapshot().queue.waiting
        #expect(waiting.map(\.cue?.source.file) == ["ward.wav", "ward.wav"], "each with the session's cue")
        _ = await call("enqueue", #"{"clips":["walk"],"client":"gpio-button"}"#)
        let last = await core.snapshot().queue.waiting.last
        #expect(last?.origin == .client("gpio-button"))
        #expect(last?.cue == nil)
    }

    @Test func sayQueuesAnAnnouncementWithItsText() async {
        #expect(await call("say", #"{"text":"  Dinner\nis ready ","cue":true,"client":"kitchen"}"#) ==
            #"{"id":1,"jsonrpc":"2.0","result":{"entries":[{"clip":"say","file":"say: Dinner is ready","origin":"kitchen","position":1,"say":"Dinner is ready","ticket":1,"title":"say: Dinner is ready"}]}}"#)
        let entry = await core.snapshot().queue.waiting.first
        #expect(entry?.clip.speech == "Dinner is ready" && entry?.cue?.source.file == "ward.wav")
        let long = String(repeating: "a", count: 1001)
        for (params, message) in [
            ("{}", #"\"text\" must give the text to say"#), (#"{"text":" "}"#, "the text to say is empty"),
            (#"{"text":"\#(long)"}"#, "the text to say is longer than 1000 characters (split it into several announcements)"),
            (#"{"text":"hi","voice":"x"}"#, "voice"),
        ] {
            let answer = await call("say", params) ?? ""
            #expect(answer.contains("invalid-params") && answer.contains(message), "\(params): \(answer)")
        }
        #expect(await core.snapshot().queue.waiting.count == 1, "nothing refused was queued")
    }

    @Test(arguments: [
        ("queue", nil, #"{"id":1,"jsonrpc":"2.0","result":{"waiting":[]}}"#),
        ("status", nil, #"{"id":1,"jsonrpc":"2.0","result":{"device":"fake","deviceState":"closed","failed":0,"paused":false,"played":0,"queueLength":0,"quiet":{"byHand":false,"held":0,"quiet":false},"session":"test","underruns":0,"uptime":0,"version":"\#(JukeboxVersion.current)","volume":100}}"#),
        ("quiet", nil, #"{"id":1,"jsonrpc":"2.0","result":{"byHand":false,"held":0,"quiet":false}}"#),
        ("next", #"{"limit":3}"#, #"{"id":1,"jsonrpc":"2.0","result":{"fixedTimes":[],"quiet":{"byHand":false,"held":0,"quiet":false}}}"#),
        ("next", #"{"limit":100}"#, #"{"id":1,"jsonrpc":"2.0","result":{"fixedTimes":[],"quiet":{"byHand":false,"held":0,"quiet":false}}}"#),
        ("quiet", #"{"set":"on"}"#, #"{"id":1,"jsonrpc":"2.0","result":{"byHand":true,"held":0,"quiet":true}}"#),
        ("quiet", #"{"for":"30m"}"#, #"{"id":1,"jsonrpc":"2.0","result":{"byHand":true,"held":0,"quiet":true,"until":2800}}"#),
        ("quiet", #"{"set":"off"}"#, #"{"id":1,"jsonrpc":"2.0","result":{"byHand":false,"held":0,"quiet":false}}"#),
        ("skip", nil, #"{"id":1,"jsonrpc":"2.0","result":{}}"#),
        ("remove", #"{"tickets":[4]}"#, #"{"id":1,"jsonrpc":"2.0","result":{"notWaiting":[4],"removed":[]}}"#),
        ("clear", nil, #"{"id":1,"jsonrpc":"2.0","result":{"notWaiting":[],"removed":[]}}"#),
        ("pause", nil, #"{"id":1,"jsonrpc":"2.0","result":{"paused":true}}"#),
        ("resume", nil, #"{"id":1,"jsonrpc":"2.0","result":{"paused":false}}"#),
        ("history", #"{"limit":5}"#, #"{"id":1,"jsonrpc":"2.0","result":{"plays":[]}}"#),
        ("volume", #"{"level":40}"#, #"{"id":1,"jsonrpc":"2.0","result":{"volume":40}}"#),
        ("volume", nil, #"{"id":1,"jsonrpc":"2.0","result":{"volume":100}}"#),
        ("reload", nil, #"{"id":1,"jsonrpc":"2.0","result":{"clips":3,"session":"test"}}"#),
        ("subscribe", nil, #"{"id":1,"jsonrpc":"2.0","result":{"subscribed":true}}"#),
        ("health", nil, #"{"id":1,"jsonrpc":"2.0","result":{"healthy":true}}"#),
    ])
    func everyMethodAnswers(method: String, params: String?, expected: String) async {
        #expect(await call(method, params) == expected)
    }

    /// `bed` without a music bed in the session: refused, saying how to add one; and its
    /// `set` is on or off only.
    @Test func bedWithoutABedSaysHowToAddOne() async {
        for params in [nil, #"{"set":"off"}"#] {
            let answer = await call("bed", params) ?? ""
            #expect(answer.contains("the session has no music bed: add a \\\"bed\\\" section"), "\(answer)")
        }
        let odd = await call("bed", #"{"set":"loud"}"#) ?? ""
        #expect(odd.contains("invalid-params") && odd.contains(#"\"set\" must be \"on\" or \"off\", not \"loud\""#), "\(odd)")
    }

    /// `now` on enqueue and say: the entry goes before everything waiting that is not urgent,
    /// and says so; it cannot be combined with `afterQuiet`, and must be true or false.
    @Test func nowPutsTheEntryFirstAndSaysItIsUrgent() async {
        _ = await call("pause")
        _ = await call("enqueue", #"{"clips":["ward","water"]}"#)
        #expect(await call("enqueue", #"{"clips":["walk"],"now":true}"#) ==
            #"{"id":1,"jsonrpc":"2.0","result":{"entries":[{"clip":"walk","file":"walk.wav","now":true,"origin":"client 7","position":1,"ticket":3,"title":"walk"}]}}"#)
        let said = await call("say", #"{"text":"Fire drill","now":true}"#) ?? ""
        #expect(said.contains(#""now":true"#) && said.contains(#""position":2"#), "\(said)")
        #expect(await fixture.waiting() == [3, 4, 1, 2])
        for (method, params, message) in [
            ("enqueue", #"{"clips":["ward"],"now":true,"afterQuiet":true}"#, "cannot both be set: one plays at once, cutting in"),
            ("say", #"{"text":"hi","now":true,"afterQuiet":true}"#, "cannot both be set: one plays at once, cutting in"),
            ("enqueue", #"{"clips":["ward"],"now":"yes"}"#, "must be true or false"),
        ] {
            let answer = await call(method, params) ?? ""
            #expect(answer.contains("invalid-params") && answer.contains(message), "\(params): \(answer)")
        }
        #expect(await fixture.waiting() == [3, 4, 1, 2], "nothing refused was queued")
    }

    /// An entry's own volume (0–100) and length to stop after (0.1 s to 24 h), each at, under
    /// and over its limits; `stop` with `queuedBy` ends only that client's entries.
    @Test func anEntryOfItsOwnVolumeAndLengthAndStoppingWhatOneClientQueued() async {
        _ = await call("pause")
        #expect(await call("enqueue", #"{"clips":["ward"],"volume":40,"stopAfter":"10s","client":"siren"}"#) ==
            #"{"id":1,"jsonrpc":"2.0","result":{"entries":[{"clip":"ward","file":"ward.wav","origin":"siren","position":1,"stopAfter":10,"ticket":1,"title":"ward","volume":40}]}}"#)
        let first = await core.snapshot().queue.waiting.first?.playing
        #expect(first == QueueEntry.Playing(volume: 0.4, stopAfter: .seconds(10)))
        for (params, accepted) in [
            (#""volume":0"#, true), (#""volume":100"#, true), (#""volume":101"#, false), (#""volume":-1"#, false), (#""volume":40.5"#, false),
            (#""volume":1e20"#, false), (#""volume":"40""#, false),
            (#""stopAfter":"100ms""#, true), (#""stopAfter":"99ms""#, false), (#""stopAfter":0"#, false), (#""stopAfter":0.1"#, true),
            (#""stopAfter":"24h""#, true), (#""stopAfter":"24h1s""#, false), (#""stopAfter":315360000"#, false), (#""stopAfter":1e300"#, false),
            (#""stopAfter":"soon""#, false), (#""stopAfter":[1]"#, false),
        ] {
            let answer = await call("enqueue", #"{"clips":["water"],\#(params)}"#) ?? ""
            #expect(answer.contains("invalid-params") != accepted, "\(params): \(answer)")
            if !accepted {
                #expect(answer.contains(params.contains("volume") ? "must be a whole number from 0 to 100" : "must be a length from 0.1s to 24h"), "\(answer)")
            }
        }
        let waiting = await fixture.waiting()
        #expect(waiting.count == 6, "the accepted ones only: \(waiting)")
        // Siren's off: its entry goes, the rest stay.
        #expect(await call("stop", #"{"queuedBy":"siren"}"#) == #"{"id":1,"jsonrpc":"2.0","result":{"removed":[1]}}"#)
        #expect(await fixture.waiting() == Array(waiting.dropFirst()))
        #expect(await call("stop", #"{"queuedBy":"nobody"}"#) == #"{"id":1,"jsonrpc":"2.0","result":{"removed":[]}}"#)
        // Without `queuedBy`: everything.
        let all = await call("stop") ?? ""
        #expect(all.contains(#""removed":[\#(waiting.dropFirst().map(String.init).joined(separator: ","))]"#), "\(all)")
        #expect(await fixture.waiting().isEmpty)
        let unknown = await call("stop", #"{"queuedBy":"siren","all":true}"#) ?? ""
        #expect(unknown.contains("invalid-params") && unknown.contains("all"), "\(unknown)")
    }

    /// `afterQuiet` holds a request while it is quiet: the answer has no position, and the
    /// queue lists it apart until quiet ends.
    @Test func afterQuietHoldsARequestWhileItIsQuiet() async {
        _ = await call("quiet", #"{"set":"on"}"#)
        #expect(await call("enqueue", #"{"clips":["ward"],"afterQuiet":true}"#) ==
            #"{"id":1,"jsonrpc":"2.0","result":{"entries":[{"afterQuiet":true,"clip":"ward","file":"ward.wav","origin":"client 7","ticket":1,"title":"ward"}]}}"#)
        #expect(await call("queue") ==
            #"{"id":1,"jsonrpc":"2.0","result":{"held":[{"afterQuiet":true,"clip":"ward","file":"ward.wav","origin":"client 7","ticket":1,"title":"ward"}],"waiting":[]}}"#)
        #expect(await call("quiet") == #"{"id":1,"jsonrpc":"2.0","result":{"byHand":true,"held":1,"quiet":true}}"#)
        #expect(await call("quiet", #"{"set":"off"}"#) == #"{"id":1,"jsonrpc":"2.0","result":{"byHand":false,"held":0,"quiet":false}}"#)
        #expect(await fixture.waiting() == [1])
        for (params, message) in [
            (#"{"set":"maybe"}"#, "must be \\\"on\\\" or \\\"off\\\", not \\\"maybe\\\""),
            (#"{"for":"30"}"#, "quiet lasts from 1m to 168h, not 30s"),
            (#"{"for":"soon"}"#, "must be a length such as 30m, 1h or 1h30m"),
            (#"{"set":"on","for":"1h"}"#, "or \\\"for\\\", not both"),
            (#"{"until":"7"}"#, "quiet has no parameter \\\"until\\\""),
        ] {
            let answer = await call("quiet", params) ?? ""
            #expect(answer.contains("invalid-params") && answer.contains(message), "\(params): \(answer)")
        }
    }

    @Test func pickQueuesADrawnClipWithTheCue() async {
        let answer = await call("pick")
        let entry = await core.snapshot().queue.waiting.first
        #expect(entry?.origin == .scheduler)
        #expect(entry?.cue?.source.file == "ward.wav")
        let id = entry?.clip.id ?? "?"
        #expect(answer == #"{"id":1,"jsonrpc":"2.0","result":{"entry":{"clip":"\#(id)","file":"\#(id).wav","origin":"scheduler","ticket":1,"title":"\#(id)"}}}"#)
    }

    @Test func clipsListsTheSession() async {
        let answer = await call("clips")
        #expect(answer?.hasPrefix(#"{"id":1,"jsonrpc":"2.0","result":{"clips":[{"duration":1,"enabled":true,"file":"ward.wav","id":"ward","timesPlayed":0,"title":"ward","windowOpen":true}"#) == true, "\(answer ?? "")")
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
        #expect(await core.snapshot().queue.paused)
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
        (#"{"jsonrpc":"2.0","id":1,"method":"next","params":{"limit":101}}"#, #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"limit\" must be a whole number from 1 to 100, not 101"},"id":1,"jsonrpc":"2.0"}"#),
        (#"{"jsonrpc":"2.0","id":1,"method":"next","params":{"limit":0}}"#, #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"limit\" must be a whole number from 1 to 100, not 0"},"id":1,"jsonrpc":"2.0"}"#),
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

    @Test func queueFullAndInvalidReloadKeepTheirReasons() async throws {
        let small = try await TestCore(queueLimit: 1)
        let answer = await RPCDispatcher(core: small.core).handle(Array(#"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"clips":["ward","water"]}}"#.utf8)).line
        #expect(answer.map { String(decoding: $0, as: UTF8.self) } == #"{"error":{"code":-32002,"data":{"reason":"queue-full"},"message":"the queue is full (1 clip waiting); try again later or clear it"},"id":1,"jsonrpc":"2.0"}"#)
        #expect(await small.waiting().isEmpty, "all or none")
        fixture.reloadProblems.set(["s.json: volume: 3 is out of range (expected 0 to 1)"])
        #expect(await call("reload") == #"{"error":{"code":-32005,"data":{"problems":["s.json: volume: 3 is out of range (expected 0 to 1)"],"reason":"session-invalid"},"message":"the session file was not reloaded; the running session is unchanged:\ns.json: volume: 3 is out of range (expected 0 to 1)"},"id":1,"jsonrpc":"2.0"}"#)
    }

    @Test func changesAreSavedBeforeTheyAreAnswered() async throws {
        let saving = try await TestCore(state: .saved)
        let handler = RPCDispatcher(core: saving.core)
        func call(_ line: String) async -> String? { await handler.handle(Array(line.utf8)).line.map { String(decoding: $0, as: UTF8.self) } }
        _ = await call(#"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"clips":["ward"]}}"#)
        #expect(saving.savedState().contains(#""ticket":1"#), "on disk when answered")
        _ = await call(#"{"jsonrpc":"2.0","id":2,"method":"volume","params":{"level":3}}"#)
        #expect(saving.savedState().contains(#""volume":0.03"#))
        let deferred = await handler.handleDeferringCommit(Array(#"{"jsonrpc":"2.0","id":5,"method":"clear"}"#.utf8))
        #expect(deferred.commit != nil)
        #expect(saving.savedState().contains(#""ticket":1"#), "the caller commits deferred replies")
        #expect(await deferred.committed() == deferred.line)
        #expect(!saving.savedState().contains(#""ticket":1"#))
        for read in ["status", "queue", "clips", "history", "volume"] {
            #expect(await handler.handleDeferringCommit(Array(#"{"jsonrpc":"2.0","id":6,"method":"\#(read)"}"#.utf8)).commit == nil, "\(read) changes nothing")
        }
    }

    @Test func aFailedSaveIsReportedNotHidden() async throws {
        let failing = try await TestCore(state: .failing)
        let handler = RPCDispatcher(core: failing.core)
        let line = await handler.handle(Array(#"{"jsonrpc":"2.0","id":1,"method":"pause"}"#.utf8)).line.map { String(decoding: $0, as: UTF8.self) }
        // The reply says why: the state's folder is a file here.
        #expect(line == #"{"error":{"code":-32006,"data":{"reason":"state-not-saved"},"message":"the change was made but could not be saved, so it would not survive a restart: cannot write the state file \#(failing.folder.file("not-a-folder/state.json")): its folder is missing; it still holds the state last saved"},"id":1,"jsonrpc":"2.0"}"#)
    }

    @Test func eventsBecomeNotifications() {
        let entry = QueueEntry(ticket: 3, clip: PlayableClip(id: "ward", source: ClipSource(file: "ward.wav", path: "/c/ward.wav")), origin: .scheduler)
        #expect(String(decoding: JukeboxEvent.finished(PlayRecord(entry: entry, startedAt: 0, outcome: .failed(reason: "ward.wav: no such file"))).notificationLine, as: UTF8.self) ==
            #"{"jsonrpc":"2.0","method":"finished","params":{"entry":{"clip":"ward","file":"ward.wav","origin":"scheduler","ticket":3,"title":"ward"},"outcome":"failed","reason":"ward.wav: no such file"}}"#)
        #expect(String(decoding: JukeboxEvent.paused.notificationLine, as: UTF8.self) == #"{"jsonrpc":"2.0","method":"paused","params":{}}"#)
    }
}

extension RPCDispatcherTests {
    /// `client` is copied into every entry and the state file: 64 characters at most.
    @Test func clientNamesAreLimitedToSixtyFourCharacters() async {
        let atLimit = String(repeating: "k", count: 64)
        #expect(await call("enqueue", #"{"clips":["ward"],"client":"\#(atLimit)"}"#)?.contains(#""origin":"\#(atLimit)""#) == true)
        #expect(await call("enqueue", #"{"clips":["ward"],"client":"\#(atLimit)k"}"#)
            == #"{"error":{"code":-32602,"data":{"reason":"invalid-params"},"message":"\"client\" must be a name of 1 to 64 characters"},"id":1,"jsonrpc":"2.0"}"#)
        #expect(await call("enqueue", #"{"clips":["ward"],"client":""}"#)?.contains("invalid-params") == true)
        #expect(await fixture.waiting().count == 1, "the refused requests queued nothing")
    }

    @Test func duplicateKeysInARequestAreRefused() async {
        let answer = await reply(#"{"jsonrpc":"2.0","id":1,"method":"status","method":"skip"}"#)
        #expect(answer?.contains(#"duplicate key \"method\""#) == true, "\(answer ?? "")")
        #expect(await fixture.waiting().isEmpty)
    }
}

/// Each front end's requests are its own: a `client` name changes what is shown, never which
/// front end an entry came through (the siren's state, `stop`, MQTT's `source`).
@Suite("Control requests: who asked", .timeLimit(.minutes(1)))
struct RequesterTests {
    @Test func aNameARequestGivesItselfIsShownAndTheFrontEndStays() async throws {
        let fixture = try await TestCore()
        _ = await fixture.core.pause()
        let web = RPCDispatcher(core: fixture.core, client: "web", frontEnd: .web)
        _ = await web.handle(Array(#"{"jsonrpc":"2.0","id":1,"method":"enqueue","params":{"clips":["ward"],"client":"siren"}}"#.utf8))
        _ = await web.handle(Array(#"{"jsonrpc":"2.0","id":2,"method":"enqueue","params":{"clips":["water"]}}"#.utf8))
        let siren = RPCDispatcher(core: fixture.core, client: "siren", frontEnd: .siren)
        _ = await siren.handle(Array(#"{"jsonrpc":"2.0","id":3,"method":"enqueue","params":{"clips":["walk"]}}"#.utf8))
        let origins = await fixture.core.snapshot().queue.waiting.map(\.origin)
        #expect(origins == [.client(Requester(.web, name: "siren")), .client(Requester(.web, name: "web")), .client(Requester(.siren, name: "siren"))])
        #expect(origins.map(\.description) == ["siren", "web", "siren"])
    }
}
