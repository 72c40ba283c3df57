import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxDispatch
import JukeboxProtocol
import Testing

/// `alert` through the dispatcher: shown, started and ended; on disk before it is answered;
/// refusals in words; and the `alert` event's notification.
@Suite("Alert requests", .timeLimit(.minutes(1)))
struct AlertRequestTests {
    let fixture: TestCore
    var handler: RPCDispatcher { RPCDispatcher(core: fixture.core, client: "phone", frontEnd: .web) }

    init() async throws { fixture = try await TestCore(state: .saved) }

    func call(_ method: String, _ params: String) async -> String {
        let line = await handler.handle(Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":\#(params)}"#.utf8))
        return await line.committed().map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    func withAlerts() async throws {
        try fixture.folder.write("test.json", text: """
            { "alerts": { "lockdown": { "clip": "walk", "every": "30s", "end": "water" }, "evacuate": { "clip": "ward" } },
              "clips": [ { "file": "ward.wav" }, { "file": "water.wav" }, { "file": "walk.wav" } ], "cue": "ward.wav" }
            """)
        _ = try await fixture.core.durable(try await fixture.core.reload())
    }

    @Test func anAlertIsStartedShownAndEndedAndSavedBeforeEachAnswer() async throws {
        #expect(await call("alert", "{}") == #"{"id":1,"jsonrpc":"2.0","result":{"alert":null,"alerts":[]}}"#)
        let none = await call("alert", #"{"start":"lockdown"}"#)
        #expect(none.contains("invalid-params") && none.contains("the session has no alerts: add an \\\"alerts\\\" section"), "\(none)")
        try await withAlerts()
        let started = await call("alert", #"{"start":"lockdown"}"#)
        #expect(started == #"{"id":1,"jsonrpc":"2.0","result":{"alert":{"by":"phone","name":"lockdown","since":1000,"soundings":0},"alerts":["lockdown","evacuate"]}}"#, "\(started)")
        #expect(fixture.savedState().contains(#""alert":{"client":"phone","name":"lockdown","since":1000.0,"via":"web"}"#), "on disk when answered: \(fixture.savedState())")
        #expect((await call("alert", "{}")).contains(#""alert":{"by":"phone","name":"lockdown""#))
        let status = await call("status", "{}")
        #expect(status.contains(#""alert":{"by":"phone","name":"lockdown","since":1000,"soundings":0},"alerts":["lockdown","evacuate"]"#), "\(status)")
        let replaced = await call("alert", #"{"start":"evacuate","client":"hall"}"#)
        #expect(replaced.contains(#""alert":{"by":"hall","name":"evacuate""#) && replaced.contains(#""ended":{"by":"phone","name":"lockdown""#), "\(replaced)")
        let ended = await call("alert", #"{"end":true}"#)
        #expect(ended == #"{"id":1,"jsonrpc":"2.0","result":{"alert":null,"alerts":["lockdown","evacuate"],"ended":{"by":"hall","name":"evacuate","since":1000,"soundings":0}}}"#, "\(ended)")
        #expect(!fixture.savedState().contains(#""alert":{"#), "off on disk when answered")
        let health = await call("health", "{}")
        #expect(health.contains(#""healthy":true"#) && !health.contains("alert"), "\(health)")
    }

    @Test func refusalsSayWhatToDo() async throws {
        try await withAlerts()
        for (params, message) in [
            (#"{"start":"lock"}"#, #"\"lock\" is not an alert of this session (its alerts: lockdown, evacuate)"#),
            (#"{"start":"lockdown","end":true}"#, #"give \"start\" (an alert's name) or \"end\": true, not both"#),
            (#"{"start":3}"#, "start"),
            (#"{"stop":true}"#, "stop"),
            (#"{"start":"lockdown","client":""}"#, "\\\"client\\\" must be a name of 1 to 64 characters"),
        ] {
            let refused = await call("alert", params)
            #expect(refused.contains("\"error\"") && refused.contains(message), "\(params): \(refused)")
        }
        #expect(await fixture.core.alertOn == nil, "nothing refused started one")
    }

    @Test func theAlertEventSaysWhichIsOnAndWhenItEnds() {
        let run = ClipPlayQueue.AlertRun(
            settings: AlertSettings(name: "lockdown", sound: .clip("walk")), sound: PlayableClip(id: "walk", source: ClipSource(file: "walk.wav", path: "/c/walk.wav")),
            endClip: nil, by: "office", since: 1000)
        #expect(String(decoding: JukeboxEvent.alert(run).notificationLine, as: UTF8.self)
            == #"{"jsonrpc":"2.0","method":"alert","params":{"alert":{"by":"office","name":"lockdown","since":1000,"soundings":0},"state":"on"}}"#)
        #expect(String(decoding: JukeboxEvent.alert(nil).notificationLine, as: UTF8.self) == #"{"jsonrpc":"2.0","method":"alert","params":{"state":"off"}}"#)
    }
}
