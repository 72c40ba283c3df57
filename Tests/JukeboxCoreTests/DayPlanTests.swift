@testable import JukeboxCore
import JukeboxCalendar
import JukeboxCoreTestSupport
import Testing

/// Day plans: the session's `plans`, `days` and `calendars` (each field checked, each limit
/// at, under and over), which plan a date gets and why, and plan times in the timetable.
@Suite("Day plans", .timeLimit(.minutes(1)))
struct DayPlanTests {
    static let path = "/srv/school/session.json"
    static let clips = #""clips": [ { "file": "bell.wav" }, { "file": "lunch.wav" }, { "file": "chime.wav" } ]"#
    static let plans = #""plans": { "regular": [ { "at": "08:00", "clip": "bell" }, { "at": "12:30", "clip": "lunch" } ], "late-start": [ { "at": "10:00", "clip": "bell", "priority": "now" } ], "none": [] }"#

    func load(_ text: String) throws(SessionLoadError) -> Session { try SessionLoader.parse(Array(text.utf8), path: Self.path) }

    func problems(_ text: String) -> [String] {
        do {
            _ = try load(text)
            return []
        } catch {
            #expect(error.exitCode == 65)
            return error.problems
        }
    }

    func session(_ fields: String) -> String { "{ \(Self.plans), \(fields), \(Self.clips) }" }

    @Test func theIssuesExampleIsRead() throws {
        let session = try load("""
            {
              \(Self.plans),
              "days": [ { "plan": "regular", "days": "mon-fri" }, { "plan": "late-start", "rule": "FREQ=MONTHLY;BYDAY=1WE", "from": "2026-09-01" } ],
              "calendars": [ { "name": "school", "source": "https://calendar.example/school.ics", "refresh": "6h",
                               "plans": { "Late start": "late-start", "No school": "none", "Exam": "regular" } } ],
              \(Self.clips)
            }
            """)
        let plans = try #require(session.dayPlans)
        #expect(plans.planNames == ["regular", "late-start", "none"])
        #expect(plans.entries(of: "late-start") == [DayPlans.Entry(time: try FixedTime.parse("10:00").get(), clipID: "bell", urgent: true)])
        #expect(plans.entries(of: "none") == [])
        #expect(plans.rules[0].days == [.mon, .tue, .wed, .thu, .fri])
        #expect(plans.rules[1].recurrence == DayPlans.Recurrence(rule: "FREQ=MONTHLY;BYDAY=1WE", from: CivilDate(year: 2026, month: 9, day: 1)!))
        let calendar = try #require(plans.calendars.first)
        #expect(calendar.source == .web("https://calendar.example/school.ics"))
        #expect(calendar.refresh == .seconds(6 * 3600))
        // In the order the file lists them, which decides among events on one date.
        #expect(calendar.plans.map(\.summary) == ["late start", "no school", "exam"])
    }

    @Test func aCalendarFileIsFoundFromTheSessionsFolder() throws {
        let session = try load(session(#""calendars": [ { "name": "local", "source": "term.ics", "plans": { "Exam": "regular" } } ]"#))
        #expect(session.dayPlans?.calendars.first?.source == .file("/srv/school/term.ics"))
        #expect(session.dayPlans?.calendars.first?.refresh == DayPlans.Calendar.defaultRefresh)
    }

    @Test func eachFieldIsCheckedWithItsLine() {
        #expect(problems(#"{ "days": [ { "plan": "regular" } ], \#(Self.clips) }"#)
            == ["\(Self.path):1: days: chooses among plans, and the session has none: add \"plans\", such as {\"regular\": [{\"at\": \"08:00\", \"clip\": \"bell\"}]}"])
        #expect(problems(#"{ "plans": { "a": [ { "at": "25:00", "clip": "bell" }, { "at": "08:00", "clip": "gong" } ] }, \#(Self.clips) }"#).map { String($0.dropFirst("\(Self.path):1: ".count)) }.sorted()
            == ["plans.a[0].at: \"25:00\" is not a time: the hour must be 0 to 23 (00:00 is midnight); an at time may also be *:MM for every hour",
                "plans.a[1].clip: \"gong\" is not a clip of this session (its ids: bell, lunch, chime)"].sorted())
        #expect(problems(session(#""days": [ { "plan": "holiday" } ]"#)).first?.contains("days[0].plan: \"holiday\" is not one of the session's plans (late-start, none, regular)") == true)
        #expect(problems(session(#""days": [ { "plan": "none", "rule": "FREQ=MINUTELY", "from": "2026-09-01" } ]"#)).first?.contains("repeats within a day") == true)
        #expect(problems(session(#""days": [ { "plan": "none", "rule": "FREQ=DAILY" } ]"#)).first?.contains("needs \"from\"") == true)
        #expect(problems(session(#""days": [ { "plan": "none", "days": "someday" } ]"#)).first?.contains("days[0].days") == true)
        #expect(problems(session(#""calendars": [ { "name": "s", "source": "webcal://x.example/a.ics", "plans": { "X": "none" } } ]"#)).first?.contains("write it with https://") == true)
        #expect(problems(session(#""calendars": [ { "name": "s", "source": "ftp://x.example/a.ics", "plans": { "X": "none" } } ]"#)).first?.contains("not an http:// or https:// address") == true)
        #expect(problems(session(#""calendars": [ { "name": "s", "source": "a.ics", "refresh": "4m", "plans": { "X": "none" } } ]"#)).first?.contains("too often (at least 5m") == true)
        #expect(problems(session(#""calendars": [ { "name": "../x", "source": "a.ics", "plans": { "X": "none" } } ]"#)).first?.contains("is not a calendar's name") == true)
        #expect(problems(session(#""calendars": [ { "name": "s", "source": "a.ics", "plans": { "Exam": "none", " exam ": "regular" } } ]"#)).first?.contains("the same summary") == true)
        #expect(problems(#"{ "plans": { "bad name": [] }, \#(Self.clips) }"#).first?.contains("is not a plan's name") == true)
        // A plans section that cannot be read is said once, not again by each rule naming it.
        #expect(problems(#"{ "plans": { "a": 3 }, "days": [ { "plan": "a" }, { "plan": "a" } ], \#(Self.clips) }"#).count == 1)
    }

    /// Where a problem is, by its line.
    @Test func aProblemIsOnTheLineOfItsField() {
        let text = "{\n  \"plans\": { \"a\": [] },\n  \"days\": [\n    { \"plan\": \"b\" }\n  ],\n  \(Self.clips)\n}"
        #expect(problems(text) == ["\(Self.path):4: days[0].plan: \"b\" is not one of the session's plans (a)"])
    }

    static func named(_ count: Int, _ item: (Int) -> String) -> String { (0..<count).map(item).joined(separator: ", ") }

    @Test(arguments: [DayPlans.maxPlans - 1, DayPlans.maxPlans, DayPlans.maxPlans + 1])
    func plansAtUnderAndOverTheLimit(count: Int) {
        let text = #"{ "plans": { \#(Self.named(count) { "\"p\($0)\": []" }) }, \#(Self.clips) }"#
        #expect(problems(text).isEmpty == (count <= DayPlans.maxPlans), "\(problems(text))")
    }

    @Test(arguments: [DayPlans.maxEntries - 1, DayPlans.maxEntries, DayPlans.maxEntries + 1])
    func timesInAPlanAtUnderAndOverTheLimit(count: Int) {
        let times = Self.named(count) { #"{ "at": "\#(String(format2: $0 / 60)):\#(String(format2: $0 % 60))", "clip": "bell" }"# }
        let text = #"{ "plans": { "p": [ \#(times) ] }, \#(Self.clips) }"#
        #expect(problems(text).isEmpty == (count <= DayPlans.maxEntries), "\(problems(text).prefix(2))")
    }

    @Test(arguments: [DayPlans.maxRules - 1, DayPlans.maxRules, DayPlans.maxRules + 1])
    func rulesAtUnderAndOverTheLimit(count: Int) {
        let text = session(#""days": [ \#(Self.named(count) { _ in #"{ "plan": "none" }"# }) ]"#)
        #expect(problems(text).isEmpty == (count <= DayPlans.maxRules), "\(problems(text).prefix(2))")
    }

    @Test(arguments: [DayPlans.maxCalendars - 1, DayPlans.maxCalendars, DayPlans.maxCalendars + 1])
    func calendarsAtUnderAndOverTheLimit(count: Int) {
        let text = session(#""calendars": [ \#(Self.named(count) { #"{ "name": "c\#($0)", "source": "c\#($0).ics", "plans": { "X": "none" } }"# }) ]"#)
        #expect(problems(text).isEmpty == (count <= DayPlans.maxCalendars), "\(problems(text).prefix(2))")
    }

    @Test(arguments: [DayPlans.Calendar.maxSummaries - 1, DayPlans.Calendar.maxSummaries, DayPlans.Calendar.maxSummaries + 1])
    func summariesOfACalendarAtUnderAndOverTheLimit(count: Int) {
        let text = session(#""calendars": [ { "name": "c", "source": "c.ics", "plans": { \#(Self.named(count) { "\"event \($0)\": \"none\"" }) } } ]"#)
        #expect(problems(text).isEmpty == (count <= DayPlans.Calendar.maxSummaries), "\(problems(text).prefix(2))")
    }

    @Test(arguments: [DayPlans.maxPlanNameLength - 1, DayPlans.maxPlanNameLength, DayPlans.maxPlanNameLength + 1])
    func aPlansNameAtUnderAndOverItsLength(length: Int) {
        let text = #"{ "plans": { "\#(String(repeating: "p", count: length))": [] }, \#(Self.clips) }"#
        #expect(problems(text).isEmpty == (length <= DayPlans.maxPlanNameLength), "\(problems(text).prefix(2))")
    }

    @Test(arguments: [DayPlans.Calendar.maxNameLength - 1, DayPlans.Calendar.maxNameLength, DayPlans.Calendar.maxNameLength + 1])
    func aCalendarsNameAtUnderAndOverItsLength(length: Int) {
        let text = session(#""calendars": [ { "name": "\#(String(repeating: "c", count: length))", "source": "c.ics", "plans": { "X": "none" } } ]"#)
        #expect(problems(text).isEmpty == (length <= DayPlans.Calendar.maxNameLength), "\(problems(text).prefix(2))")
    }

    // MARK: - Which plan a date gets

    static func date(_ year: Int, _ month: Int, _ day: Int) -> CivilDate { CivilDate(year: year, month: month, day: day)! }

    func planner(byHand: [CivilDate: DayPlans.ByHand] = [:], calendars: [String: CalendarDates] = [:]) throws -> DayPlanner {
        let session = try load("""
            { \(Self.plans),
              "days": [ { "plan": "none", "dates": ["12-24..01-06"] }, { "plan": "late-start", "rule": "FREQ=MONTHLY;BYDAY=1WE", "from": "2026-09-01" },
                        { "plan": "regular", "days": "mon-fri", "except": ["holidays"] } ],
              "holidays": ["2026-12-08"],
              "calendars": [ { "name": "school", "source": "s.ics", "plans": { "No school": "none", "Late start": "late-start", "Exam": "regular" } },
                             { "name": "district", "source": "d.ics", "plans": { "Exam": "late-start" } } ],
              \(Self.clips) }
            """)
        return DayPlanner(plans: session.dayPlans!, byHand: byHand, calendars: calendars, holidays: session.holidays, around: Self.date(2026, 11, 29))
    }

    @Test func byHandThenTheCalendarsInOrderThenTheRulesThenNone() throws {
        let school = CalendarDates(summaries: [
            Self.date(2026, 12, 1): ["late start", "no school"], Self.date(2026, 12, 3): ["exam"], Self.date(2026, 12, 4): ["assembly"],
        ])
        let district = CalendarDates(summaries: [Self.date(2026, 12, 3): ["exam"], Self.date(2026, 12, 10): ["exam"]])
        let planner = try planner(byHand: [Self.date(2026, 12, 3): DayPlans.ByHand(plan: "none", by: "pi", at: LocalZoneTests.utc(2026, 11, 28, 6, 40))], calendars: ["school": school, "district": district])
        func choice(_ day: Int) -> PlanChoice? { planner.choice(for: Self.date(2026, 12, day)) }
        // Set by hand beats the calendars.
        #expect(choice(3) == PlanChoice(plan: "none", why: .byHand(by: "pi", at: LocalZoneTests.utc(2026, 11, 28, 6, 40))))
        #expect(choice(3)?.why.words(zone: CentralEuropeanZone(), rules: planner.plans.rules) == "set by hand (pi, 2026-11-28 07:40)")
        // Among one calendar's events, the summary listed first wins ("No school" over "Late start").
        #expect(choice(1) == PlanChoice(plan: "none", why: .calendar(name: "school", summary: "No school")))
        #expect(choice(1)?.why.words(zone: nil, rules: []) == "calendar school: No school")
        // The second calendar where the first says nothing.
        #expect(choice(10) == PlanChoice(plan: "late-start", why: .calendar(name: "district", summary: "Exam")))
        // An event the session maps to nothing leaves the date to the rules.
        #expect(choice(4) == PlanChoice(plan: "regular", why: .rule(2)))
        let rules = planner.plans.rules
        #expect(choice(4)?.why.words(zone: nil, rules: rules) == "days rule 3 (mon-fri; except holidays)")
        #expect(PlanChoice.Why.rule(1).words(zone: nil, rules: rules) == "days rule 2 (FREQ=MONTHLY;BYDAY=1WE)")
        #expect(PlanChoice.Why.rule(0).words(zone: nil, rules: rules) == "days rule 1 (12-24..01-06)")
        // The first Wednesday by RRULE, ahead of the weekday rule.
        #expect(choice(2) == PlanChoice(plan: "late-start", why: .rule(1)))
        // A holiday the weekday rule leaves out, and a weekend: no plan.
        #expect(choice(8) == nil)
        #expect(choice(5) == nil)
        #expect(planner.choice(for: Self.date(2026, 12, 28)) == PlanChoice(plan: "none", why: .rule(0)))
        // Beyond the rules' window the RRULE is worked out for the one date.
        #expect(planner.choice(for: Self.date(2028, 3, 1)) == PlanChoice(plan: "late-start", why: .rule(1)))
    }

    /// A timed event covers every local date it overlaps: 20:00 in New York is the next date
    /// in Amsterdam; one that ends at midnight does not cover the next date.
    @Test func aTimedEventCoversTheLocalDatesItOverlaps() {
        let zone = CentralEuropeanZone()
        let exam = ICalendar.Occurrence(summary: " Exam ", span: .moments(start: LocalZoneTests.utc(2026, 12, 4, 1), end: LocalZoneTests.utc(2026, 12, 4, 3)))
        let evening = ICalendar.Occurrence(summary: "Late start", span: .moments(start: LocalZoneTests.utc(2026, 12, 7, 17), end: LocalZoneTests.utc(2026, 12, 7, 23)))
        let allDay = ICalendar.Occurrence(summary: "No school", span: .days(first: Self.date(2026, 12, 21).daysSinceEpoch, count: 2))
        let dates = CalendarDates([exam, evening, allDay], zone: zone)
        #expect(dates.summaries == [
            Self.date(2026, 12, 4): ["exam"], Self.date(2026, 12, 7): ["late start"],
            Self.date(2026, 12, 21): ["no school"], Self.date(2026, 12, 22): ["no school"],
        ])
    }

    // MARK: - Plan times in the timetable

    let clock = ManualClock()

    func timetable(start: Int64, fields: String) throws -> (ClipTimetable, ClipPlayQueue) {
        let session = try load(session(fields))
        let player = Player(sink: FakeSink(), decoder: Fixtures.decoder([]), clock: ManualClock(), logger: .quiet)
        let events = EventBus()
        let queue = ClipPlayQueue(player: player, events: events, time: TimeSource(clock: ManualClock()), logger: .quiet)
        let clock = clock
        let time = TimeSource(clock: clock, wallClock: { Double(start + clock.now.offset.components.seconds) }, zone: CentralEuropeanZone())
        let quiet = QuietHours(schedule: ScheduleBoard(session), queue: queue, events: events, time: time, logger: .quiet)
        return (ClipTimetable(schedule: ScheduleBoard(session), queue: queue, quiet: quiet, time: time, logger: .quiet), queue)
    }

    @Test func aPlansTimesAreQueuedAtTheirMomentsAndUrgentAsTheEntrySays() async throws {
        // Monday 2026-11-30, 07:58 CET; the first Wednesday is 2 December.
        let start = LocalZoneTests.utc(2026, 11, 30, 6, 58)
        let (timetable, queue) = try timetable(start: start, fields: #""days": [ { "plan": "late-start", "rule": "FREQ=MONTHLY;BYDAY=1WE", "from": "2026-09-01" }, { "plan": "regular", "days": "mon-fri" } ]"#)
        let running = Task { try await timetable.run() }
        defer { running.cancel() }
        await clock.waitForSleepers()
        #expect(await timetable.next?.moment == LocalZoneTests.utc(2026, 11, 30, 7))
        while await queue.waiting.isEmpty {
            clock.advanceToNextDeadline()
            await clock.waitForSleepers()
        }
        #expect(await queue.waiting.map(\.clip.id) == ["bell"])
        #expect(await queue.waiting.first?.origin == .fixedTime(LocalZoneTests.utc(2026, 11, 30, 7)))
        #expect(clock.now.offset == .seconds(120))
        // Wednesday's plan is the late start, urgent at 10:00.
        let wednesday = await timetable.plannedTimes(on: Self.date(2026, 12, 2))
        #expect(wednesday.map(\.clipID) == ["bell"] && wednesday.map(\.urgent) == [true])
        #expect(wednesday.map(\.moment) == [LocalZoneTests.utc(2026, 12, 2, 9)])
        let coming = await timetable.plan(limit: 3, horizon: 7 * 86_400)
        #expect(coming.map(\.moment) == [LocalZoneTests.utc(2026, 11, 30, 11, 30), LocalZoneTests.utc(2026, 12, 1, 7), LocalZoneTests.utc(2026, 12, 1, 11, 30)])
        #expect(coming.map(\.plan) == ["regular", "regular", "regular"])
    }

    @Test func aPlanSetByHandReplacesTheDaysTimesAndIsKeptForTheStateFile() async throws {
        let start = LocalZoneTests.utc(2026, 11, 30, 6, 0)
        let (timetable, _) = try timetable(start: start, fields: #""days": [ { "plan": "regular", "days": "mon-fri" } ]"#)
        let today = Self.date(2026, 11, 30)
        #expect(await timetable.plannedTimes(on: today).count == 2)
        await timetable.setPlan("none", on: today, by: "pi")
        #expect(await timetable.plannedTimes(on: today).isEmpty)
        #expect(await timetable.days(from: today, count: 2).map(\.choice?.why) == [.byHand(by: "pi", at: start), .rule(0)])
        #expect(await timetable.persistedPlans == ["2026-11-30": DayPlans.ByHand(plan: "none", by: "pi", at: start)])
        await timetable.setPlan(nil, on: today)
        #expect(await timetable.plannedTimes(on: today).count == 2)
        // Taken up from the state file; a plan the session no longer has is let go.
        await timetable.restorePlans(["2026-12-01": DayPlans.ByHand(plan: "late-start"), "2026-12-02": DayPlans.ByHand(plan: "gone")])
        #expect(await timetable.persistedPlans == ["2026-12-01": DayPlans.ByHand(plan: "late-start")])
    }

    @Test func aCalendarsNewCopyChangesTheTimesAtOnce() async throws {
        let start = LocalZoneTests.utc(2026, 11, 30, 6, 0)
        let (timetable, _) = try timetable(start: start, fields: #""days": [ { "plan": "regular", "days": "mon-fri" } ], "calendars": [ { "name": "school", "source": "s.ics", "plans": { "No school": "none" } } ]"#)
        let tuesday = Self.date(2026, 12, 1)
        #expect(await timetable.plannedTimes(on: tuesday).count == 2)
        await timetable.calendarChanged("school", dates: CalendarDates(summaries: [tuesday: ["no school"]]))
        #expect(await timetable.plannedTimes(on: tuesday).isEmpty)
        #expect(await timetable.days(from: tuesday, count: 1).first?.choice == PlanChoice(plan: "none", why: .calendar(name: "school", summary: "No school")))
    }
}

extension String {
    /// Two digits: `07`.
    init(format2 value: Int) { self = (value < 10 ? "0" : "") + "\(value)" }
}
