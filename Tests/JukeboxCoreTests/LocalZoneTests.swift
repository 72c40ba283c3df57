import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// Central European time by the EU's rule: UTC+1, and UTC+2 from 01:00 UTC on the last Sunday
/// of March until 01:00 UTC on the last Sunday of October. Written out so tests need no `TZ`.
struct CentralEuropeanZone: LocalZone {
    func utcOffset(at epochSeconds: Int64) -> Int {
        let year = CivilDate(daysSinceEpoch: Int((epochSeconds >= 0 ? epochSeconds : epochSeconds - 86_399) / 86_400)).year
        let start = Self.lastSunday(of: 3, in: year) * 86_400 + 3600
        let end = Self.lastSunday(of: 10, in: year) * 86_400 + 3600
        return (start..<end).contains(epochSeconds) ? 7200 : 3600
    }

    static func lastSunday(of month: Int, in year: Int) -> Int64 {
        let last = CivilDate(year: year, month: month, day: CivilDate.days(inMonth: month, year: year))!
        return Int64(last.daysSinceEpoch - last.weekday.rawValue)
    }
}

@Suite struct LocalZoneTests {
    let zone = CentralEuropeanZone()
    static func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int = 0, _ second: Int = 0) -> Int64 {
        Int64(CivilDate(year: year, month: month, day: day)!.daysSinceEpoch) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    @Test func anOrdinaryTimeIsOneMoment() {
        let date = CivilDate(year: 2026, month: 7, day: 1)!
        #expect(zone.moment(of: date, at: 12 * 3600) == Self.utc(2026, 7, 1, 10))
        #expect(zone.moment(of: CivilDate(year: 2026, month: 1, day: 15)!, at: 7 * 3600 + 55 * 60) == Self.utc(2026, 1, 15, 6, 55))
    }

    /// 2026-03-29: clocks go from 02:00 to 03:00. 02:30 never shows; it is 03:00, the first
    /// minute after the gap (01:00 UTC).
    @Test func aTimeInTheSpringGapIsTheEndOfTheGap() {
        let date = CivilDate(year: 2026, month: 3, day: 29)!
        #expect(zone.moment(of: date, at: 2 * 3600 + 30 * 60) == Self.utc(2026, 3, 29, 1))
        #expect(zone.moment(of: date, at: 2 * 3600) == Self.utc(2026, 3, 29, 1))
        #expect(zone.moment(of: date, at: 3 * 3600) == Self.utc(2026, 3, 29, 1))
        #expect(zone.moment(of: date, at: 1 * 3600 + 59 * 60) == Self.utc(2026, 3, 29, 0, 59))
        #expect(zone.localTime(at: Self.utc(2026, 3, 29, 1)).secondOfDay == 3 * 3600)
    }

    /// 2026-10-25: clocks go back from 03:00 to 02:00. 02:30 shows twice; it is the first.
    @Test func aRepeatedTimeIsItsFirstOccurrence() {
        let date = CivilDate(year: 2026, month: 10, day: 25)!
        #expect(zone.moment(of: date, at: 2 * 3600 + 30 * 60) == Self.utc(2026, 10, 25, 0, 30))
        #expect(zone.localTime(at: Self.utc(2026, 10, 25, 0, 30)).secondOfDay == zone.localTime(at: Self.utc(2026, 10, 25, 1, 30)).secondOfDay)
        #expect(zone.moment(of: date, at: 3 * 3600) == Self.utc(2026, 10, 25, 2))
        #expect(zone.moment(of: date, at: 1 * 3600 + 59 * 60) == Self.utc(2026, 10, 24, 23, 59))
    }

    @Test func localTimeCarriesTheDateAndOffset() {
        let reading = zone.localTime(at: Self.utc(2026, 12, 31, 23, 30))
        #expect(reading.date == CivilDate(year: 2027, month: 1, day: 1))
        #expect(reading.secondOfDay == 30 * 60)
        #expect(reading.utcOffset == 3600)
        #expect(reading.epochSeconds == Self.utc(2026, 12, 31, 23, 30))
        #expect(FixedOffsetZone(seconds: -5 * 3600).localTime(at: 0).date == CivilDate(year: 1969, month: 12, day: 31))
    }
}
