import JukeboxCalendar
import JukeboxFiles
import Testing

/// libical behind `ICalendar`, on calendars in the shapes Google, Outlook/Exchange and
/// Nextcloud publish, and on what is not a calendar.
@Suite("iCalendar", .timeLimit(.minutes(1)))
struct ICalendarTests {
    /// Days since 1970-01-01.
    static func day(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        return era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
    }

    static func utc(_ year: Int, _ month: Int, _ d: Int, _ hour: Int, _ minute: Int = 0) -> Int64 {
        Int64(day(year, month, d)) * 86_400 + Int64(hour * 3600 + minute * 60)
    }

    static func calendar(_ body: String, head: String = "") -> String {
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n\(head)\(body)END:VCALENDAR\r\n"
    }

    static func event(_ lines: String) -> String { "BEGIN:VEVENT\r\n\(lines)END:VEVENT\r\n" }

    static let newYork = """
        BEGIN:VTIMEZONE\r
        TZID:America/New_York\r
        BEGIN:DAYLIGHT\r
        TZOFFSETFROM:-0500\r
        TZOFFSETTO:-0400\r
        TZNAME:EDT\r
        DTSTART:19700308T020000\r
        RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r
        END:DAYLIGHT\r
        BEGIN:STANDARD\r
        TZOFFSETFROM:-0400\r
        TZOFFSETTO:-0500\r
        TZNAME:EST\r
        DTSTART:19701101T020000\r
        RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\r
        END:STANDARD\r
        END:VTIMEZONE\r\n
        """

    let window = (from: day(2026, 11, 1), through: day(2027, 12, 31))

    func read(_ text: String, keeping: Set<String>? = nil) async throws -> [ICalendar.Occurrence] {
        try await Self.read(text, from: window.from, through: window.through, keeping: keeping)
    }

    /// libical's work on a thread of its own, as the daemon runs it: a test's calls on the
    /// cooperative pool would hold up every other suite's tasks for as long as they take.
    static func read(_ text: String, from: Int, through: Int, keeping: Set<String>? = nil) async throws -> [ICalendar.Occurrence] {
        try await BlockingWorkQueue(label: "test.ical").run { try ICalendar.read(text, from: from, through: through, keeping: keeping) }
    }

    /// Google's shape: a VTIMEZONE, a weekly series with an EXDATE and one occurrence moved by
    /// a RECURRENCE-ID, one cancelled the same way, and all-day events of one and three days.
    @Test func aGoogleCalendarsSeriesExceptionsAndAllDayEvents() async throws {
        let text = Self.calendar(
            Self.event("""
                DTSTART;TZID=America/New_York:20261202T080000\r
                DTEND;TZID=America/New_York:20261202T090000\r
                RRULE:FREQ=WEEKLY;BYDAY=WE;COUNT=5\r
                EXDATE;TZID=America/New_York:20261209T080000\r
                UID:late@google.com\r
                SUMMARY:Late start\r

                """)
                + Self.event("""
                    DTSTART;TZID=America/New_York:20261217T100000\r
                    DTEND;TZID=America/New_York:20261217T110000\r
                    RECURRENCE-ID;TZID=America/New_York:20261216T080000\r
                    UID:late@google.com\r
                    SUMMARY:Late start\r

                    """)
                + Self.event("""
                    DTSTART;TZID=America/New_York:20261223T080000\r
                    RECURRENCE-ID;TZID=America/New_York:20261223T080000\r
                    STATUS:CANCELLED\r
                    UID:late@google.com\r
                    SUMMARY:Late start\r

                    """)
                + Self.event("DTSTART;VALUE=DATE:20261224\r\nDTEND;VALUE=DATE:20261227\r\nUID:x@google.com\r\nSUMMARY:  No School \r\n")
                + Self.event("DTSTART;VALUE=DATE:20270104\r\nUID:y@google.com\r\nSUMMARY:Exam\r\n"),
            head: "X-WR-CALNAME:School\r\n" + Self.newYork)
        let found = try await read(text)
        let late = found.filter { $0.summary == "Late start" }.map(\.span)
        // 2, 9 (excluded), 16 (moved to the 17th at 10:00), 23 (cancelled), 30.
        #expect(late.contains(.moments(start: Self.utc(2026, 12, 2, 13), end: Self.utc(2026, 12, 2, 14))))
        #expect(late.contains(.moments(start: Self.utc(2026, 12, 17, 15), end: Self.utc(2026, 12, 17, 16))))
        #expect(late.contains(.moments(start: Self.utc(2026, 12, 30, 13), end: Self.utc(2026, 12, 30, 14))))
        #expect(late.count == 3, "\(late)")
        #expect(found.first { ICalendar.key($0.summary) == "no school" }?.span == .days(first: Self.day(2026, 12, 24), count: 3))
        #expect(found.first { $0.summary == "Exam" }?.span == .days(first: Self.day(2027, 1, 4), count: 1))
        // Only the summaries asked for.
        #expect(try await read(text, keeping: ["exam"]).map(\.summary) == ["Exam"])
    }

    /// Outlook's shape: a Windows zone name with no VTIMEZONE, and a DURATION.
    @Test func anOutlookCalendarWithAWindowsZoneName() async throws {
        let text = Self.calendar(Self.event("""
            DTSTART;TZID="W. Europe Standard Time":20261203T200000\r
            DURATION:PT2H\r
            UID:040000008200E00074C5B7101A82E008@outlook\r
            SUMMARY:Exam\r

            """))
        // 20:00 in Amsterdam in winter is 19:00 UTC.
        #expect(try await read(text).map(\.span) == [.moments(start: Self.utc(2026, 12, 3, 19), end: Self.utc(2026, 12, 3, 21))])
    }

    /// A floating time is read in X-WR-TIMEZONE when the calendar gives one, else as a clock reading.
    @Test func floatingTimesAndGooglesXWRTimezone() async throws {
        let body = Self.event("DTSTART:20261203T090000\r\nDTEND:20261203T100000\r\nUID:f\r\nSUMMARY:Exam\r\n")
        #expect(try await read(Self.calendar(body)).map(\.span) == [.floating(start: Self.utc(2026, 12, 3, 9), end: Self.utc(2026, 12, 3, 10))])
        let zoned = Self.calendar(body, head: "X-WR-TIMEZONE:America/New_York\r\n")
        #expect(try await read(zoned).map(\.span) == [.moments(start: Self.utc(2026, 12, 3, 14), end: Self.utc(2026, 12, 3, 15))])
    }

    /// Nextcloud's shape: UTC times, a monthly rule by ordinal weekday with UNTIL, and RDATE.
    @Test func aNextcloudCalendarsMonthlyRuleAndRDate() async throws {
        let text = Self.calendar(Self.event("""
            DTSTART:20261202T070000Z\r
            DTEND:20261202T080000Z\r
            RRULE:FREQ=MONTHLY;BYDAY=1WE;UNTIL=20270301T000000Z\r
            RDATE:20270310T070000Z\r
            UID:n@nextcloud\r
            SUMMARY:Late start\r

            """))
        let starts = try await read(text).compactMap { if case .moments(let start, _) = $0.span { start } else { nil } }.sorted()
        #expect(starts == [Self.utc(2026, 12, 2, 7), Self.utc(2027, 1, 6, 7), Self.utc(2027, 2, 3, 7), Self.utc(2027, 3, 10, 7)])
    }

    /// What is not a calendar is refused in words; libical never aborts.
    @Test(arguments: ["", "hello", "<html><body>Sign in</body></html>", "BEGIN:VEVENT\r\nSUMMARY:x\r\nEND:VEVENT\r\n", "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:garbage\r\nEND:VCALENDAR"])
    func whatIsNotACalendarIsRefusedOrYieldsNothing(text: String) async throws {
        do {
            let found = try await read(text)
            #expect(found.isEmpty, "\(found)")
        } catch {
            #expect("\(error)".contains("iCalendar"), "\(error)")
        }
    }

    @Test func theSizeLimitAtUnderAndOver() async throws {
        let event = Self.event("DTSTART;VALUE=DATE:20261203\r\nUID:u\r\nSUMMARY:Exam\r\n")
        let base = Self.calendar(event, head: "X-PAD:\r\n").utf8.count
        func sized(_ target: Int) -> String {
            Self.calendar(event, head: "X-PAD:" + String(repeating: "a", count: target - base) + "\r\n")
        }
        #expect(sized(ICalendar.maxBytes).utf8.count == ICalendar.maxBytes)
        #expect(try await read(sized(ICalendar.maxBytes)).count == 1)
        #expect(try await read(sized(ICalendar.maxBytes - 1)).count == 1)
        let over = await #expect(throws: ICalendar.Problem.self) { try await read(sized(ICalendar.maxBytes + 1)) }
        #expect(over?.description.contains("larger than 4 MB") == true)
    }

    @Test func theEventLimitAtUnderAndOver() async throws {
        func calendar(_ count: Int) -> String {
            Self.calendar(String(repeating: Self.event("DTSTART;VALUE=DATE:20200101\r\nSUMMARY:Old\r\n"), count: count))
        }
        #expect(try await read(calendar(ICalendar.maxEvents - 1)).isEmpty)
        #expect(try await read(calendar(ICalendar.maxEvents)).isEmpty)
        let over = await #expect(throws: ICalendar.Problem.self) { try await read(calendar(ICalendar.maxEvents + 1)) }
        #expect(over?.description.contains("more than \(ICalendar.maxEvents) events") == true)
    }

    /// An event is seen at most `maxOccurrencesPerEvent` times in the span read; a rule that
    /// gives nothing for ever stops after `maxSteps`.
    @Test func aRuleThatRepeatsEndlesslyOrNeverIsBounded() async throws {
        let often = Self.calendar(Self.event("DTSTART:20261201T000000Z\r\nRRULE:FREQ=MINUTELY\r\nUID:m\r\nSUMMARY:x\r\n"))
        #expect(try await read(often).count == ICalendar.maxOccurrencesPerEvent)
        let counted = Self.calendar(Self.event("DTSTART:20261201T000000Z\r\nRRULE:FREQ=DAILY;COUNT=\(ICalendar.maxOccurrencesPerEvent - 1)\r\nUID:h\r\nSUMMARY:x\r\n"))
        #expect(try await Self.read(counted, from: Self.day(2026, 11, 1), through: Self.day(2040, 1, 1)).count == ICalendar.maxOccurrencesPerEvent - 1)
        let never = Self.calendar(Self.event("DTSTART;VALUE=DATE:20261230\r\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30\r\nUID:n\r\nSUMMARY:x\r\n"))
        #expect(try await read(never).isEmpty)
    }

    @Test func rulesForDaysRulesAreCheckedAndExpanded() {
        #expect(ICalendar.ruleProblem("FREQ=MONTHLY;BYDAY=1WE") == nil)
        #expect(ICalendar.ruleProblem("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO") == nil)
        #expect(ICalendar.ruleProblem("FREQ=HOURLY")?.contains("within a day") == true)
        #expect(ICalendar.ruleProblem("every wednesday")?.contains("not an RRULE") == true)
        #expect(ICalendar.ruleProblem("")?.contains("not an RRULE") == true)
        let firstWednesdays = ICalendar.ruleDates("FREQ=MONTHLY;BYDAY=1WE", start: Self.day(2026, 9, 1), from: Self.day(2026, 11, 1), through: Self.day(2027, 2, 28))
        #expect(firstWednesdays == [Self.day(2026, 11, 4), Self.day(2026, 12, 2), Self.day(2027, 1, 6), Self.day(2027, 2, 3)])
        let fortnightly = ICalendar.ruleDates("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", start: Self.day(2026, 11, 2), from: Self.day(2026, 11, 1), through: Self.day(2026, 11, 30))
        #expect(fortnightly == [Self.day(2026, 11, 2), Self.day(2026, 11, 16), Self.day(2026, 11, 30)])
        // With COUNT, counted from the start however far the span is.
        #expect(ICalendar.ruleDates("FREQ=DAILY;COUNT=3", start: Self.day(2026, 1, 1), from: Self.day(2026, 1, 2), through: Self.day(2026, 12, 31)) == [Self.day(2026, 1, 2), Self.day(2026, 1, 3)])
    }
}
