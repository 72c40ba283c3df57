import Foundation
@testable import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxTestSupport
import Testing

/// The session's calendars read from files the test writes: what they cover reaches the
/// timetable; the last good copy is kept beside the state, used at a start without the
/// source, and kept when the source breaks.
@Suite("Calendar feeds", .timeLimit(.minutes(1)))
struct CalendarFeedsTests {
    let folder: TemporaryDirectory
    let start = LocalZoneTests.utc(2026, 11, 30, 6, 0)

    init() throws { folder = try TemporaryDirectory() }

    static func calendar(_ summary: String, on date: String) -> String {
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:\(date)\r\nDTSTART;VALUE=DATE:\(date)\r\nSUMMARY:\(summary)\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    }

    func parts() throws -> (CalendarFeeds, ClipTimetable) {
        let text = """
            { "plans": { "regular": [ { "at": "08:00", "clip": "bell" } ], "none": [] },
              "days": [ { "plan": "regular", "days": "mon-fri" } ],
              "calendars": [ { "name": "school", "source": "school.ics", "plans": { "No school": "none" } } ],
              "clips": [ { "file": "bell.wav" } ] }
            """
        let session = try SessionLoader.parse(Array(text.utf8), path: folder.file("session.json"))
        let player = Player(sink: FakeSink(), decoder: Fixtures.decoder([]), clock: ManualClock(), logger: .quiet)
        let events = EventBus()
        let queue = ClipPlayQueue(player: player, events: events, time: TimeSource(clock: ManualClock()), logger: .quiet)
        let start = start
        let time = TimeSource(clock: ManualClock(), wallClock: { Double(start) }, zone: CentralEuropeanZone())
        let board = ScheduleBoard(session)
        let quiet = QuietHours(schedule: board, queue: queue, events: events, time: time, logger: .quiet)
        let timetable = ClipTimetable(schedule: board, queue: queue, quiet: quiet, time: time, logger: .quiet)
        let feeds = CalendarFeeds(schedule: board, timetable: timetable, time: time, fetcher: nil, folder: folder.file("state.calendars"), logger: .quiet)
        return (feeds, timetable)
    }

    static let tuesday = CivilDate(year: 2026, month: 12, day: 1)!

    func plan(_ timetable: ClipTimetable) async -> PlanChoice? { await timetable.days(from: Self.tuesday, count: 1).first?.choice }

    @Test func aCalendarsEventsChooseThePlanAndItsCopyIsKept() async throws {
        try folder.write("school.ics", text: Self.calendar("No School", on: "20261201"))
        let (feeds, timetable) = try parts()
        #expect(await plan(timetable) == PlanChoice(plan: "regular", why: .rule(0)))
        await feeds.readAll()
        #expect(await plan(timetable) == PlanChoice(plan: "none", why: .calendar(name: "school", summary: "No school")))
        #expect(await feeds.states.first?.readAt == start)
        #expect(await feeds.states.first?.problem == nil)
        let kept = try String(contentsOfFile: folder.file("state.calendars/school.ics"), encoding: .utf8)
        #expect(kept == Self.calendar("No School", on: "20261201"))
    }

    @Test func aBrokenCalendarKeepsTheLastGoodOneAndSaysWhy() async throws {
        try folder.write("school.ics", text: Self.calendar("No School", on: "20261201"))
        let (feeds, timetable) = try parts()
        await feeds.readAll()
        try folder.write("school.ics", text: "<html>Sign in to see this calendar</html>")
        await feeds.readAll()
        #expect(await plan(timetable)?.plan == "none", "the last good copy still counts")
        let state = try #require(await feeds.states.first)
        #expect(state.problem?.contains("is not an iCalendar file") == true, "\(state.problem ?? "")")
        #expect(state.failures == 1)
        // Gone: said, and still the last good copy.
        try FileManager.default.removeItem(atPath: folder.file("school.ics"))
        await feeds.readAll()
        #expect(await feeds.states.first?.failures == 2)
        #expect(await plan(timetable)?.plan == "none")
        // Good again: the problem is cleared.
        try folder.write("school.ics", text: Self.calendar("Assembly", on: "20261201"))
        await feeds.readAll()
        #expect(await feeds.states.first?.problem == nil)
        #expect(await plan(timetable)?.plan == "regular")
    }

    /// A start without the source (the network down, the file gone) has the plans the last
    /// good copy gave, before anything is read.
    @Test func aStartWithoutTheSourceUsesTheCopyKept() async throws {
        try folder.write("school.ics", text: Self.calendar("No School", on: "20261201"))
        let (first, _) = try parts()
        await first.readAll()
        try FileManager.default.removeItem(atPath: folder.file("school.ics"))
        let (feeds, timetable) = try parts()
        await feeds.start()
        #expect(await plan(timetable)?.plan == "none")
        #expect(await feeds.states.first?.readAt == nil, "not read from its source yet")
    }
}
