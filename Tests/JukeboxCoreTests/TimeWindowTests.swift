import Glibc
import JukeboxCore
import Testing
import JukeboxCoreTestSupport

@Suite("Time windows", .timeLimit(.minutes(1)))
struct TimeWindowTests {
    func at(_ day: Weekday, _ time: String) -> LocalTime { LocalTime(weekday: day, TimeOfDay(time)!) }
    func window(_ from: String, _ to: String, days: Set<Weekday>? = nil) -> TimeWindow {
        TimeWindow(from: TimeOfDay(from)!, to: TimeOfDay(to)!, days: days)
    }

    @Test func sameDayWindowIsHalfOpen() {
        let w = window("08:00", "22:30")
        #expect(!w.contains(at(.mon, "07:59")))
        #expect(w.contains(at(.mon, "08:00")))
        #expect(w.contains(at(.mon, "22:29")))
        #expect(!w.contains(at(.mon, "22:30")))
    }

    @Test func windowCrossingMidnight() {
        let w = window("22:00", "02:00")
        #expect(w.crossesMidnight)
        #expect(w.contains(at(.tue, "22:00")))
        #expect(w.contains(at(.tue, "23:59")))
        #expect(w.contains(at(.wed, "00:00")))
        #expect(w.contains(at(.wed, "01:59")))
        #expect(!w.contains(at(.wed, "02:00")))
        #expect(!w.contains(at(.wed, "12:00")))
        #expect(!w.contains(at(.wed, "21:59")))
    }

    @Test func daysReferToTheDayTheWindowStarts() {
        let w = window("22:00", "02:00", days: [.fri])
        #expect(w.contains(at(.fri, "23:00")))
        #expect(w.contains(at(.sat, "01:00")), "Friday night's window is still open early on Saturday")
        #expect(!w.contains(at(.sat, "23:00")))
        #expect(!w.contains(at(.fri, "01:00")), "early Friday belongs to Thursday's window")
        let weekdays = window("08:00", "17:00", days: [.mon, .tue, .wed, .thu, .fri])
        #expect(weekdays.contains(at(.fri, "09:00")))
        #expect(!weekdays.contains(at(.sat, "09:00")))
    }

    @Test func endOfDayWindow() throws {
        let session = try SessionLoader.parse(Array(#"{ "clips": [ { "file": "a.wav", "windows": [ { "from": "20:00", "to": "24:00", "days": ["sun"] } ] } ] }"#.utf8), path: "/s.json")
        let w = session.clips[0].windows[0]
        #expect(w.contains(at(.sun, "23:59")))
        #expect(!w.contains(at(.mon, "00:00")))
        #expect(!w.contains(at(.sun, "19:59")))
    }

    @Test func emptyListMeansAlways() {
        #expect([TimeWindow]().allow(at(.sun, "03:00")))
        #expect(![window("08:00", "09:00")].allow(at(.sun, "03:00")))
        #expect([window("08:00", "09:00"), window("02:00", "04:00")].allow(at(.sun, "03:00")))
    }

    @Test func utcEpochConversion() {
        // 2026-11-22 06:00:00 UTC is a Sunday.
        #expect(LocalTime(epochSeconds: 1_795_327_200).description == "sun 06:00")
        #expect(LocalTime(epochSeconds: 1_795_327_200).date.description == "2026-11-22")
        #expect(LocalTime(epochSeconds: 1_795_327_200, utcOffsetSeconds: -7 * 3600).description == "sat 23:00")
        #expect(LocalTime(epochSeconds: 1_795_327_200, utcOffsetSeconds: -7 * 3600).epochSeconds == 1_795_327_200)
        #expect(LocalTime(epochSeconds: 0).description == "thu 00:00")
    }

    /// The daemon reads local time through the C library, so DST follows the zone's own rules.
    /// This is the only test that touches `TZ`; every other test uses injected local time.
    @Test func systemLocalTimeFollowsDaylightSavingTime() {
        setenv("TZ", "Europe/London", 1)
        tzset()
        defer { unsetenv("TZ"); tzset() }
        // 2026-03-29 00:59:59 UTC is 00:59:59 GMT; one second later clocks jump to 02:00 BST.
        #expect(SystemLocalTime().localTime(at: 1_774_745_999).secondOfDay == 3599)
        #expect(SystemLocalTime().localTime(at: 1_774_746_000).description == "sun 02:00")
        #expect(SystemLocalTime().localTime(at: 1_774_746_000).utcOffset == 3600)
        // A 01:00–03:00 window on that day is open from the jump until 03:00 BST (02:00 UTC).
        let w = window("01:00", "03:00")
        #expect(w.contains(SystemLocalTime().localTime(at: 1_774_746_000)))
        #expect(!w.contains(SystemLocalTime().localTime(at: 1_774_749_600)))
        // 2026-10-25 00:30 UTC is 01:30 BST; 01:30 UTC is 01:30 GMT again: both inside the window.
        #expect(SystemLocalTime().localTime(at: 1_792_888_200).description == "sun 01:30")
        #expect(SystemLocalTime().localTime(at: 1_792_891_800).description == "sun 01:30")
        #expect(w.contains(SystemLocalTime().localTime(at: 1_792_891_800)))
        // A 22:00-02:00 window opened on Saturday night in BST closes at 02:00 GMT.
        let night = window("22:00", "02:00", days: [.sat])
        #expect(night.contains(SystemLocalTime().localTime(at: 1_792_891_800)))
        #expect(!night.contains(SystemLocalTime().localTime(at: 1_792_893_600)))
    }

    /// At 78° N the sun stays up in June and down in December: a day window follows it.
    @Test func sunWindowsFollowThePolarSun() throws {
        let svalbard = try #require(GeoLocation(latitude: 78, longitude: 15))
        let day = TimeWindow(from: .sun(.sunrise, offset: .zero), to: .sun(.sunset, offset: .zero))
        let night = TimeWindow(from: .sun(.sunset, offset: .zero), to: .sun(.sunrise, offset: .zero))
        func noon(_ month: Int) -> LocalTime { LocalTime(date: CivilDate(year: 2026, month: month, day: 21)!, secondOfDay: 12 * 3600, utcOffset: 3600) }
        func midnight(_ month: Int) -> LocalTime { LocalTime(date: CivilDate(year: 2026, month: month, day: 21)!, secondOfDay: 0, utcOffset: 3600) }
        #expect(day.contains(noon(6), location: svalbard))
        #expect(day.contains(midnight(6), location: svalbard))
        #expect(!night.contains(noon(6), location: svalbard))
        #expect(!night.contains(midnight(6), location: svalbard))
        #expect(!day.contains(noon(12), location: svalbard))
        #expect(night.contains(noon(12), location: svalbard))
        #expect(night.contains(midnight(12), location: svalbard))
        // In March the sun rises and sets there as anywhere.
        #expect(day.contains(noon(3), location: svalbard))
        #expect(!day.contains(midnight(3), location: svalbard))
        #expect(night.contains(midnight(3), location: svalbard))
    }

    /// `dates` and `except` name the day a window starts on.
    @Test func datesAndExceptLimitAWindow() throws {
        let holidays = [try DateRule.parse("12-25", allowHolidays: false).get()]
        let late = TimeWindow(from: .clock(TimeOfDay("22:00")!), to: .clock(TimeOfDay("02:00")!), filter: DateFilter(except: [.holidays]))
        func reading(_ day: Int, _ second: Int) -> LocalTime { LocalTime(date: CivilDate(year: 2026, month: 12, day: day)!, secondOfDay: second) }
        #expect(late.contains(reading(24, 23 * 3600), holidays: holidays))
        // Opened on the 24th, it runs on into Christmas morning.
        #expect(late.contains(reading(25, 3600), holidays: holidays))
        #expect(!late.contains(reading(25, 23 * 3600), holidays: holidays))
        #expect(!late.contains(reading(26, 3600), holidays: holidays))
        #expect(late.contains(reading(26, 23 * 3600), holidays: holidays))
        let advent = TimeWindow(from: .clock(TimeOfDay("08:00")!), to: .clock(TimeOfDay("09:00")!), filter: DateFilter(dates: [try DateRule.parse("12-01..12-24", allowHolidays: false).get()]))
        #expect(advent.contains(reading(24, 8 * 3600)))
        #expect(!advent.contains(reading(25, 8 * 3600)))
    }
}
