import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxDispatch
import JukeboxProtocol
import Testing

/// `plan` and `setPlan` through the dispatcher: the coming days' plans and why; a plan set by
/// hand is in the state file before it is answered; unknown plans, past dates and dates too
/// far ahead are refused in words.
@Suite("Day plan requests", .timeLimit(.minutes(1)))
struct PlanRequestTests {
    let fixture: TestCore
    var handler: RPCDispatcher { RPCDispatcher(core: fixture.core, client: "phone") }

    init() async throws { fixture = try await TestCore(state: .saved) }

    func call(_ method: String, _ params: String) async -> String {
        let line = await handler.handle(Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":\#(params)}"#.utf8))
        return await line.committed().map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    func withPlans() async throws {
        try fixture.folder.write("test.json", text: """
            { "plans": { "regular": [ { "at": "08:00", "clip": "ward" } ], "none": [] },
              "days": [ { "plan": "regular", "days": "mon-fri" } ],
              "clips": [ { "file": "ward.wav" }, { "file": "water.wav" }, { "file": "walk.wav" } ], "cue": "ward.wav" }
            """)
        _ = try await fixture.core.durable(try await fixture.core.reload())
    }

    @Test func theComingDaysAreListedWithWhyAndTheirTimes() async throws {
        #expect(await call("plan", "{}").contains("the session has no day plans"))
        try await withPlans()
        let answer = await call("plan", #"{"days":3}"#)
        let today = await fixture.core.today
        // Exactly a list of dates, each with its plan (or null), why, and its times on the local clock.
        let (first, second, third) = (today, today.adding(days: 1), today.adding(days: 2))
        func day(_ date: CivilDate) -> String {
            date.weekday == .sat || date.weekday == .sun
                ? #"{"date":"\#(date)","plan":null,"times":[],"why":"no rule matches"}"#
                : #"{"date":"\#(date)","plan":"regular","times":[{"at":"08:00","clip":"ward"}],"why":"days rule 1 (mon-fri)"}"#
        }
        #expect(answer == #"{"id":1,"jsonrpc":"2.0","result":[\#(day(first)),\#(day(second)),\#(day(third))]}"#, "\(answer)")
        for (params, message) in [(#"{"days":0}"#, "days"), (#"{"days":63}"#, "days"), (#"{"from":"soon"}"#, "must be a date such as")] {
            let refused = await call("plan", params)
            #expect(refused.contains("invalid-params") && refused.contains(message), "\(params): \(refused)")
        }
        #expect(!(await call("plan", #"{"days":62}"#)).contains("error"))
        // Fourteen days unless asked.
        #expect((await call("plan", "{}")).ranges(of: #""date":"#).count == 14)
    }

    @Test func aPlanSetByHandIsSavedBeforeItIsAnswered() async throws {
        try await withPlans()
        let today = await fixture.core.today
        let answer = await call("setPlan", #"{"date":"\#(today)","plan":"none"}"#)
        let setAt = fixture.core.time.zone.localTime(at: 1000)
        let clock = TimeOfDay(minuteOfDay: setAt.secondOfDay / 60)!
        #expect(answer.contains(#""plan":"none","times":[],"why":"set by hand (phone, \#(setAt.date) \#(clock))""#), "\(answer)")
        #expect(fixture.savedState().contains(#""plans":{"\#(today)":{"at":1000,"by":"phone","plan":"none"}}"#), "on disk when answered: \(fixture.savedState())")
        let cleared = await call("setPlan", #"{"date":"\#(today)","plan":null}"#)
        #expect(cleared.contains(#""why":"days rule 1 (mon-fri)""#) || cleared.contains(#""why":"no rule matches""#), "\(cleared)")
        #expect(!fixture.savedState().contains(#""plans""#))
    }

    @Test func unknownPlansPastDatesAndDatesTooFarAheadAreRefused() async throws {
        try await withPlans()
        let today = await fixture.core.today
        let last = today.adding(days: Jukebox.planDaysAhead)
        #expect(!(await call("setPlan", #"{"date":"\#(last)","plan":"none"}"#)).contains("error"), "the 400th day ahead")
        #expect(!(await call("setPlan", #"{"date":"\#(last.adding(days: -1))","plan":"none"}"#)).contains("error"))
        // Today and tomorrow where jukeboxd is, for front ends that do not know its zone.
        #expect((await call("setPlan", #"{"date":"tomorrow","plan":"none"}"#)).contains(#""date":"\#(today.adding(days: 1))""#))
        for (params, message) in [
            (#"{"date":"\#(last.adding(days: 1))","plan":"none"}"#, "more than 400 days ahead"),
            (#"{"date":"\#(today.adding(days: -1))","plan":"none"}"#, "is in the past"),
            (#"{"date":"\#(today)","plan":"holiday"}"#, #"\"holiday\" is not one of the session's plans (regular, none)"#),
            (#"{"date":"\#(today)","plan":"none","client":7}"#, "client"),
            (#"{"plan":"none"}"#, #"\"date\" is missing"#),
            (#"{"date":"someday","plan":"none"}"#, "must be a date such as"),
            (#"{"date":"\#(today)","plan":"none","extra":1}"#, "extra"),
        ] {
            let refused = await call("setPlan", params)
            #expect(refused.contains("error") && refused.contains(message), "\(params): \(refused)")
        }
    }
}
