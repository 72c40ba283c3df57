#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A place on Earth, for the sun's times: degrees north (−90…90) and east (−180…180).
public struct GeoLocation: Sendable, Hashable, CustomStringConvertible {
    public let latitude: Double
    public let longitude: Double

    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude) else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }

    public var description: String { "\(latitude),\(longitude)" }
}

/// The moments of the day the sun gives: civil dawn and dusk (its centre 6° below the
/// horizon) and sunrise and sunset (its upper edge on the horizon, with standard refraction).
public enum SunEvent: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case dawn, sunrise, sunset, dusk

    /// The sun's centre below the horizon at this moment, in degrees (sunrise and sunset:
    /// 34′ of refraction plus 16′ of the disc's radius, as NOAA and the almanacs reckon them).
    var depression: Double {
        switch self {
        case .dawn, .dusk: 6
        case .sunrise, .sunset: 0.833
        }
    }

    /// Morning events happen before the sun's highest point, evening ones after it.
    var isMorning: Bool { self == .dawn || self == .sunrise }

    public var description: String { rawValue }
}

/// When `event` happens on a day, or why it does not.
public enum SunTime: Sendable, Hashable {
    /// Seconds since the Unix epoch.
    case at(Int64)
    /// The sun stays above that altitude all day (polar day; for dawn and dusk, white nights).
    case sunStaysUp
    /// The sun stays below it all day (polar night).
    case sunStaysDown

    public var epochSeconds: Int64? { if case .at(let seconds) = self { seconds } else { nil } }
}

/// The sun's times worked out on the device, with no network: NOAA's solar calculator
/// (gml.noaa.gov/grad/solcalc, after Jean Meeus, "Astronomical Algorithms"), including its
/// second pass, which works the sun's position out again at the first answer's time. Within
/// a minute of NOAA's published figures between latitudes 72° N and S.
public enum SunCalculator {
    /// The moment of `event` on `date` at `location`. `date` is the local date: the event
    /// nearest that date's local solar noon at the place's longitude is the one meant.
    public static func time(of event: SunEvent, on date: CivilDate, at location: GeoLocation) -> SunTime {
        let midnightUTC = Double(date.daysSinceEpoch) * 86_400
        let julianDay = 2_440_587.5 + Double(date.daysSinceEpoch)
        guard case .minutes(let first) = minutesAfterMidnightUTC(event, julianDay: julianDay, at: location) else {
            // No such moment at 0h UTC: look again at the place's solar noon before saying so.
            return minutesAfterMidnightUTC(event, julianDay: julianDay + 0.5 - location.longitude / 360, at: location).asTime(midnightUTC)
        }
        return minutesAfterMidnightUTC(event, julianDay: julianDay + first / 1440, at: location).asTime(midnightUTC)
    }

    /// The sun's four moments on `date`, placed on the local clock of `zone`: what `--check`
    /// and `jukebox next` print, so they can be compared with a weather site.
    public static func day(_ date: CivilDate, at location: GeoLocation, zone: any LocalZone) -> [(event: SunEvent, time: String)] {
        SunEvent.allCases.map { event in
            switch time(of: event, on: date, at: location) {
            case .at(let moment):
                let second = zone.localTime(at: moment).secondOfDay
                return (event, TimeOfDay(minuteOfDay: second / 60)!.description)
            case .sunStaysUp: return (event, "none (the sun stays up)")
            case .sunStaysDown: return (event, "none (the sun stays down)")
            }
        }
    }

    /// The runs of days from `date` on, within `days`, on which `event` does not happen,
    /// each with whether the sun stays up or down through it.
    public static func absences(of event: SunEvent, from date: CivilDate, days: Int, at location: GeoLocation)
        -> [(first: CivilDate, last: CivilDate, sunStaysUp: Bool)]
    {
        var runs: [(first: CivilDate, last: CivilDate, sunStaysUp: Bool)] = []
        for offset in 0..<days {
            let day = date.adding(days: offset)
            let answer = time(of: event, on: day, at: location)
            guard answer.epochSeconds == nil else { continue }
            let up = answer == .sunStaysUp
            if let last = runs.last, last.sunStaysUp == up, last.last.adding(days: 1) == day {
                runs[runs.count - 1].last = day
            } else {
                runs.append((day, day, up))
            }
        }
        return runs
    }

    private enum Answer {
        case minutes(Double)
        case up, down

        func asTime(_ midnightUTC: Double) -> SunTime {
            switch self {
            case .minutes(let minutes): .at(Int64((midnightUTC + minutes * 60).rounded()))
            case .up: .sunStaysUp
            case .down: .sunStaysDown
            }
        }
    }

    /// Minutes after 0h UTC of the date, with the sun's position taken at `julianDay`.
    private static func minutesAfterMidnightUTC(_ event: SunEvent, julianDay: Double, at location: GeoLocation) -> Answer {
        let t = (julianDay - 2_451_545) / 36_525
        let sun = position(julianCentury: t)
        let latitude = radians(location.latitude)
        let cosHourAngle = cos(radians(90 + event.depression)) / (cos(latitude) * cos(sun.declination)) - tan(latitude) * tan(sun.declination)
        if cosHourAngle > 1 { return .down }
        if cosHourAngle < -1 { return .up }
        let hourAngle = degrees(acos(cosHourAngle)) * (event.isMorning ? 1 : -1)
        // 720 is noon at Greenwich; the Earth turns a degree in 4 minutes.
        return .minutes(720 - 4 * (location.longitude + hourAngle) - sun.equationOfTimeMinutes)
    }

    /// The sun's declination (radians) and the equation of time (minutes) at `t` Julian
    /// centuries after J2000.0.
    static func position(julianCentury t: Double) -> (declination: Double, equationOfTimeMinutes: Double) {
        let meanLongitude = (280.466_46 + t * (36_000.769_83 + t * 0.000_303_2)).truncatingRemainder(dividingBy: 360)
        let meanAnomaly = 357.529_11 + t * (35_999.050_29 - 0.000_153_7 * t)
        let eccentricity = 0.016_708_634 - t * (0.000_042_037 + 0.000_000_126_7 * t)
        let m = radians(meanAnomaly)
        let centre = sin(m) * (1.914_602 - t * (0.004_817 + 0.000_014 * t)) + sin(2 * m) * (0.019_993 - 0.000_101 * t) + sin(3 * m) * 0.000_289
        let trueLongitude = meanLongitude + centre
        let omega = radians(125.04 - 1934.136 * t)
        let apparentLongitude = trueLongitude - 0.005_69 - 0.004_78 * sin(omega)
        let seconds = 21.448 - t * (46.815 + t * (0.000_59 - t * 0.001_813))
        let meanObliquity = 23 + (26 + seconds / 60) / 60
        let obliquity = radians(meanObliquity + 0.002_56 * cos(omega))
        let declination = asin(sin(obliquity) * sin(radians(apparentLongitude)))
        let y = pow(tan(obliquity / 2), 2)
        let l0 = radians(meanLongitude)
        let equation = y * sin(2 * l0) - 2 * eccentricity * sin(m) + 4 * eccentricity * y * sin(m) * cos(2 * l0)
            - 0.5 * y * y * sin(4 * l0) - 1.25 * eccentricity * eccentricity * sin(2 * m)
        return (declination, 4 * degrees(equation))
    }

    private static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
    private static func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
}
