import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

@Suite struct DayTimeTests {
    @Test func clockAndSunTimesAreRead() throws {
        #expect(try DayTime.parse("07:55").get() == .clock(TimeOfDay("07:55")!))
        #expect(try DayTime.parse("sunset").get() == .sun(.sunset, offset: .zero))
        #expect(try DayTime.parse("sunset-15m").get() == .sun(.sunset, offset: .seconds(-900)))
        #expect(try DayTime.parse("dawn+1h").get() == .sun(.dawn, offset: .seconds(3600)))
        #expect(try DayTime.parse(" Sunrise+1h30m ").get() == .sun(.sunrise, offset: .seconds(5400)))
        #expect(try DayTime.parse("dusk-12h").get() == .sun(.dusk, offset: .seconds(-43_200)))
        #expect(try DayTime.parse("sunset-15m").get().description == "sunset-15m")
        #expect(try DayTime.parse("dawn+1h30m").get().description == "dawn+1h30m")
    }

    /// Each mistake is named with how to write it.
    @Test func mistakesSayHowToWriteIt() {
        func problem(_ text: String) -> String? {
            if case .failure(let invalid) = DayTime.parse(text) { invalid.description } else { nil }
        }
        #expect(problem("sunset-15") == "\"sunset-15\": the offset has no unit; write sunset-15m for minutes (s, m and h are understood)")
        #expect(problem("sunset-") == "\"sunset-\" has no offset after -: write it as sunset-15m")
        #expect(problem("sunsetx") == "\"sunsetx\" is not a time: after sunset comes + or - and an offset, such as sunset-15m")
        #expect(problem("dawn+13h") == "\"dawn+13h\": an offset from the sun is at most 12h")
        #expect(problem("dawn+soon") == "\"dawn+soon\": \"soon\" is not an offset (expected e.g. 15m, 1h or 1h30m)")
        #expect(problem("noon")?.hasPrefix("\"noon\" is not a time (expected HH:MM") == true)
        #expect(problem("7:5") != nil)
        #expect(problem("25:00") != nil)
    }

    /// A sun time is placed on the local clock of its date, with its offset.
    @Test func aSunTimeLandsOnTheLocalClock() throws {
        let amsterdam = try #require(GeoLocation(latitude: 52.37, longitude: 4.89))
        let date = CivilDate(year: 2026, month: 6, day: 21)!
        let sunset = try DayTime.parse("sunset").get().secondOfDay(on: date, zone: CentralEuropeanZone(), location: amsterdam)
        let early = try DayTime.parse("sunset-15m").get().secondOfDay(on: date, zone: CentralEuropeanZone(), location: amsterdam)
        guard case .at(let second) = sunset, case .at(let earlier) = early else {
            Issue.record("sunset in Amsterdam: \(sunset), \(early)")
            return
        }
        // About 22:06 CEST at midsummer.
        #expect((22 * 3600...22 * 3600 + 10 * 60).contains(second))
        #expect(second - earlier == 900)
        #expect(try DayTime.parse("sunset").get().secondOfDay(on: date, zone: CentralEuropeanZone(), location: nil) == .needsLocation)
        let svalbard = try #require(GeoLocation(latitude: 78, longitude: 15))
        #expect(try DayTime.parse("sunrise").get().secondOfDay(on: date, zone: CentralEuropeanZone(), location: svalbard) == .sunStaysUp)
    }
}

@Suite struct DateRuleTests {
    func rule(_ text: String, holidays: Bool = false) throws -> DateRule { try DateRule.parse(text, allowHolidays: holidays).get() }
    func date(_ text: String) -> CivilDate { DateRule.date(text)! }

    @Test func singleDatesRangesAndYearlyDates() throws {
        #expect(try rule("2026-04-05").contains(date("2026-04-05"), holidays: []))
        #expect(try !rule("2026-04-05").contains(date("2027-04-05"), holidays: []))
        #expect(try rule("2026-04-01..2026-04-10").contains(date("2026-04-10"), holidays: []))
        #expect(try !rule("2026-04-01..2026-04-10").contains(date("2026-04-11"), holidays: []))
        #expect(try rule("12-25").contains(date("2031-12-25"), holidays: []))
        #expect(try rule("07-15..08-31").contains(date("2026-08-01"), holidays: []))
        #expect(try !rule("07-15..08-31").contains(date("2026-09-01"), holidays: []))
    }

    /// A yearly range that ends before it starts runs across the new year.
    @Test func aYearlyRangeCrossesTheNewYear() throws {
        let christmas = try rule("12-24..01-06")
        for day in ["2026-12-24", "2026-12-31", "2027-01-01", "2027-01-06"] {
            #expect(christmas.contains(date(day), holidays: []), "\(day)")
        }
        for day in ["2026-12-23", "2027-01-07", "2026-07-01"] {
            #expect(!christmas.contains(date(day), holidays: []), "\(day)")
        }
        #expect(christmas.description == "12-24..01-06")
    }

    @Test func holidaysAreTheSessionsList() throws {
        let holidays = [try rule("12-25"), try rule("2026-04-06")]
        let filter = DateFilter(except: [try rule("holidays", holidays: true)])
        #expect(!filter.allows(date("2026-12-25"), holidays: holidays))
        #expect(!filter.allows(date("2026-04-06"), holidays: holidays))
        #expect(filter.allows(date("2026-04-07"), holidays: holidays))
        let only = DateFilter(dates: [try rule("12-01..12-31")], except: [try rule("holidays", holidays: true)])
        #expect(only.allows(date("2026-12-24"), holidays: holidays))
        #expect(!only.allows(date("2026-12-25"), holidays: holidays))
        #expect(!only.allows(date("2026-11-30"), holidays: holidays))
    }

    @Test func mistakesSayHowToWriteIt() {
        func problem(_ text: String, holidays: Bool = false) -> String? {
            if case .failure(let invalid) = DateRule.parse(text, allowHolidays: holidays) { invalid.description } else { nil }
        }
        #expect(problem("holidays") == "\"holidays\" can only be excluded (in except), not listed in dates")
        #expect(problem("2026-04-10..2026-04-01")?.contains("ends before it starts") == true)
        #expect(problem("2026-12-24..01-06")?.contains("mixes a full date with a yearly one") == true)
        #expect(problem("2026-02-30")?.hasPrefix("\"2026-02-30\" is not a date") == true)
        #expect(problem("13-01") != nil)
        #expect(problem("1-5") != nil)
        #expect(problem("02-29") == nil)
    }
}

@Suite struct FixedTimeTests {
    let zone = CentralEuropeanZone()
    func at(_ text: String) throws -> FixedTime { try FixedTime.parse(text).get() }
    func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int = 0) -> Int64 {
        LocalZoneTests.utc(year, month, day, hour, minute)
    }

    @Test func timesAndDaysAreRead() throws {
        #expect(try at("07:55@mon-fri").days == [.mon, .tue, .wed, .thu, .fri])
        #expect(try at("07:55@mon-fri").description == "07:55@mon-fri")
        #expect(try at("*:00").time == .hourly(minute: 0))
        #expect(try at("*:30@sat,sun").description == "*:30@sat,sun")
        #expect(try at("sunset-15m@fri").description == "sunset-15m@fri")
        #expect(try at("12:00@fri-mon").days == [.fri, .sat, .sun, .mon])
        #expect(try at("12:00@mon,wed-fri").description == "12:00@mon,wed-fri")
        for wrong in ["07:55@weekdays", "*:5", "*:60", "24:00", "07:55@mon@tue", "sunset-15"] {
            #expect(throws: FixedTime.Invalid.self, "\(wrong)") { try at(wrong) }
        }
    }

    @Test func nextSkipsDaysThatAreNotItsOwn() throws {
        let bell = try at("07:55@mon-fri")
        // Friday 2026-11-27 08:00 CET: the next bell is Monday 07:55.
        #expect(bell.next(after: utc(2026, 11, 27, 7), zone: zone, location: nil, holidays: []) == utc(2026, 11, 30, 6, 55))
        // Exactly at a bell: the next one, not the same.
        #expect(bell.next(after: utc(2026, 11, 30, 6, 55), zone: zone, location: nil, holidays: []) == utc(2026, 12, 1, 6, 55))
        // Holidays are skipped.
        var school = bell
        school.filter = DateFilter(except: [.holidays])
        let holidays = [try DateRule.parse("2026-11-30..2026-12-01", allowHolidays: false).get()]
        #expect(school.next(after: utc(2026, 11, 27, 7), zone: zone, location: nil, holidays: holidays) == utc(2026, 12, 2, 6, 55))
    }

    /// On the night clocks go forward, 02:30 is 03:00; on the night they go back, it happens once.
    @Test func daylightSavingNights() throws {
        let early = try at("02:30")
        #expect(early.moments(on: CivilDate(year: 2026, month: 3, day: 29)!, zone: zone, location: nil, holidays: []) == [utc(2026, 3, 29, 1)])
        #expect(early.moments(on: CivilDate(year: 2026, month: 10, day: 25)!, zone: zone, location: nil, holidays: []) == [utc(2026, 10, 25, 0, 30)])
        // Every hour on the hour: 23 chimes when an hour is lost, 24 when one is repeated.
        let hourly = try at("*:00")
        #expect(hourly.moments(on: CivilDate(year: 2026, month: 3, day: 29)!, zone: zone, location: nil, holidays: []).count == 23)
        #expect(hourly.moments(on: CivilDate(year: 2026, month: 10, day: 25)!, zone: zone, location: nil, holidays: []).count == 24)
        #expect(hourly.moments(on: CivilDate(year: 2026, month: 7, day: 1)!, zone: zone, location: nil, holidays: []).count == 24)
        // A whole year of hourly chimes, day after day, never goes backwards or repeats.
        var previous = utc(2025, 12, 31, 23)
        var chimes = 0
        while let next = hourly.next(after: previous, zone: zone, location: nil, holidays: []), next < utc(2027, 1, 1, 0) {
            #expect(next > previous)
            #expect(zone.localTime(at: next).secondOfDay % 3600 == 0)
            previous = next
            chimes += 1
        }
        #expect(chimes == 365 * 24 - 1)
    }

    @Test func sunTimesNeedTheSunToRise() throws {
        let svalbard = try #require(GeoLocation(latitude: 78, longitude: 15))
        let dusk = try at("sunset")
        // Polar day from late April: the next sunset is in late August.
        let next = try #require(dusk.next(after: utc(2026, 6, 1, 0), zone: zone, location: svalbard, holidays: []))
        let date = zone.localTime(at: next).date
        #expect(date.month == 8 && (20...31).contains(date.day), "\(date)")
    }
}
