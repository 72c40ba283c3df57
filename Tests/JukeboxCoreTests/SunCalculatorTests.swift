import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// The sun's times against published tables, each within a minute of the printed figure.
///
/// Sources, each read once (nothing is fetched when the tests run):
/// - NOAA Solar Calculator (gml.noaa.gov/grad/solcalc), yearly tables (table.php?lat=…&lon=…&year=…):
///   - Sydney, −33.85, 151.2, 2017, in local time: AEDT (+11) until 2 April and from 1 October,
///     AEST (+10) between; as quoted by Time4J's SunSydneyTest ("NOAA-data for year 2017").
///   - San Diego, 32.7157, −117.1611, 2026: PDT (−7) on 8 October, PST (−8) on 21 December.
///   - Greenwich, 51.4779, −0.0015, 2026-11-03, UTC.
///   - Dunaharaszti, Hungary, 47.3537, 19.0971, 2024: CET (+1) on 1 January, CEST (+2) on 15 June.
/// - U.S. Naval Observatory, "Complete Sun and Moon Data for One Day", Atlanta, 33.8, −84.4,
///   2009-09-06, EDT (−4), with civil twilight; as printed in PyEphem's documentation
///   (rhodesmill.org/pyephem/rise-set.html).
@Suite struct SunCalculatorTests {
    struct Reference: CustomTestStringConvertible, Sendable {
        let place: String
        let latitude: Double, longitude: Double
        let date: String
        /// Hours east of UTC that the table's clock times are in.
        let utcOffset: Int
        let event: SunEvent
        let printed: String

        var testDescription: String { "\(place) \(date) \(event) \(printed)" }
    }

    static let references: [Reference] = [
        // Sydney, southern hemisphere: summer, both sides of both daylight-saving changes, and the June solstice.
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-01-01", utcOffset: 11, event: .sunrise, printed: "05:48"),
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-01-01", utcOffset: 11, event: .sunset, printed: "20:09"),
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-04-01", utcOffset: 11, event: .sunrise, printed: "07:07"),
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-04-01", utcOffset: 11, event: .sunset, printed: "18:51"),
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-04-02", utcOffset: 10, event: .sunrise, printed: "06:08"),
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-04-02", utcOffset: 10, event: .sunset, printed: "17:49"),
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-06-21", utcOffset: 10, event: .sunrise, printed: "07:00"),
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-06-21", utcOffset: 10, event: .sunset, printed: "16:54"),
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-09-30", utcOffset: 10, event: .sunrise, printed: "05:34"),
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-09-30", utcOffset: 10, event: .sunset, printed: "17:57"),
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-10-01", utcOffset: 11, event: .sunrise, printed: "06:33"),
        .init(place: "Sydney", latitude: -33.85, longitude: 151.2, date: "2017-10-01", utcOffset: 11, event: .sunset, printed: "18:58"),
        // San Diego: daylight saving in October, standard time at the December solstice.
        .init(place: "San Diego", latitude: 32.7157, longitude: -117.1611, date: "2026-10-08", utcOffset: -7, event: .sunrise, printed: "06:48"),
        .init(place: "San Diego", latitude: 32.7157, longitude: -117.1611, date: "2026-10-08", utcOffset: -7, event: .sunset, printed: "18:24"),
        .init(place: "San Diego", latitude: 32.7157, longitude: -117.1611, date: "2026-12-21", utcOffset: -8, event: .sunrise, printed: "06:47"),
        .init(place: "San Diego", latitude: 32.7157, longitude: -117.1611, date: "2026-12-21", utcOffset: -8, event: .sunset, printed: "16:47"),
        // Greenwich, on the prime meridian.
        .init(place: "Greenwich", latitude: 51.4779, longitude: -0.0015, date: "2026-11-03", utcOffset: 0, event: .sunrise, printed: "06:57"),
        .init(place: "Greenwich", latitude: 51.4779, longitude: -0.0015, date: "2026-11-03", utcOffset: 0, event: .sunset, printed: "16:29"),
        // Dunaharaszti: winter, and near the June solstice.
        .init(place: "Dunaharaszti", latitude: 47.3537, longitude: 19.0971, date: "2024-01-01", utcOffset: 1, event: .sunrise, printed: "07:31"),
        .init(place: "Dunaharaszti", latitude: 47.3537, longitude: 19.0971, date: "2024-06-15", utcOffset: 2, event: .sunrise, printed: "04:46"),
        // Atlanta, by the Naval Observatory: dawn and dusk are civil twilight.
        .init(place: "Atlanta", latitude: 33.8, longitude: -84.4, date: "2009-09-06", utcOffset: -4, event: .dawn, printed: "06:50"),
        .init(place: "Atlanta", latitude: 33.8, longitude: -84.4, date: "2009-09-06", utcOffset: -4, event: .sunrise, printed: "07:15"),
        .init(place: "Atlanta", latitude: 33.8, longitude: -84.4, date: "2009-09-06", utcOffset: -4, event: .sunset, printed: "19:56"),
        .init(place: "Atlanta", latitude: 33.8, longitude: -84.4, date: "2009-09-06", utcOffset: -4, event: .dusk, printed: "20:21"),
    ]

    static func date(_ text: String) -> CivilDate {
        let parts = text.split(separator: "-").map { Int($0)! }
        return CivilDate(year: parts[0], month: parts[1], day: parts[2])!
    }

    @Test(arguments: references)
    func withinAMinuteOfThePublishedTable(_ reference: Reference) throws {
        let date = Self.date(reference.date)
        let location = try #require(GeoLocation(latitude: reference.latitude, longitude: reference.longitude))
        let found = try #require(SunCalculator.time(of: reference.event, on: date, at: location).epochSeconds)
        let clock = reference.printed.split(separator: ":").map { Int($0)! }
        let printed = Int64(date.daysSinceEpoch * 86_400 + clock[0] * 3600 + clock[1] * 60 - reference.utcOffset * 3600)
        #expect(abs(found - printed) <= 60, "computed \(found - printed) s from the table's \(reference.printed)")
    }

    /// 78° N (Svalbard): the sun neither rises nor sets at the solstices, and says which.
    @Test func polarDayAndPolarNight() throws {
        let svalbard = try #require(GeoLocation(latitude: 78, longitude: 15))
        for event in SunEvent.allCases {
            #expect(SunCalculator.time(of: event, on: Self.date("2026-06-21"), at: svalbard) == .sunStaysUp)
            #expect(SunCalculator.time(of: event, on: Self.date("2026-12-21"), at: svalbard) == .sunStaysDown)
        }
        // In Reykjavik at midsummer the sun sets, but civil twilight never ends (white nights):
        // at midnight the sun is only about 2.4° below the horizon.
        let reykjavik = try #require(GeoLocation(latitude: 64.15, longitude: -21.94))
        #expect(SunCalculator.time(of: .sunset, on: Self.date("2026-06-21"), at: reykjavik).epochSeconds != nil)
        #expect(SunCalculator.time(of: .dusk, on: Self.date("2026-06-21"), at: reykjavik) == .sunStaysUp)
        #expect(SunCalculator.time(of: .dawn, on: Self.date("2026-06-21"), at: reykjavik) == .sunStaysUp)
    }

    /// Dawn, sunrise, sunset and dusk come in that order, on every day of a year, north and south.
    @Test func eventsComeInOrder() throws {
        for (latitude, longitude) in [(52.37, 4.89), (-41.29, 174.78), (0.0, -78.5), (64.1, -21.9)] {
            let place = try #require(GeoLocation(latitude: latitude, longitude: longitude))
            for day in 0..<365 {
                let date = Self.date("2026-01-01").adding(days: day)
                let times = SunEvent.allCases.map { SunCalculator.time(of: $0, on: date, at: place).epochSeconds }
                let known = times.compactMap { $0 }
                #expect(known == known.sorted(), "\(place) \(date): \(times)")
            }
        }
    }

    @Test func locationsOutsideTheGlobeAreRefused() {
        #expect(GeoLocation(latitude: 90.5, longitude: 0) == nil)
        #expect(GeoLocation(latitude: 0, longitude: -180.01) == nil)
        #expect(GeoLocation(latitude: .nan, longitude: 0) == nil)
        #expect(GeoLocation(latitude: -90, longitude: 180) != nil)
    }
}

@Suite struct CivilDateTests {
    @Test func daysSinceEpochRoundTrip() {
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            #expect(CivilDate(daysSinceEpoch: days).daysSinceEpoch == days)
        }
        #expect(CivilDate(daysSinceEpoch: 0).description == "1970-01-01")
        #expect(CivilDate(year: 2026, month: 11, day: 24)!.daysSinceEpoch == 20_781)
        #expect(CivilDate(year: 2026, month: 11, day: 24)!.weekday == .tue)
        #expect(CivilDate(year: 2000, month: 2, day: 29) != nil)
        #expect(CivilDate(year: 1900, month: 2, day: 29) == nil)
        #expect(CivilDate(year: 2026, month: 4, day: 31) == nil)
        #expect(CivilDate(year: 2026, month: 12, day: 31)!.adding(days: 1).description == "2027-01-01")
    }
}
