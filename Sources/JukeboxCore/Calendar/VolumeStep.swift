/// One step of a volume schedule (`"volume": [{"from": "07:00", "level": 0.8}, …]`): from
/// this time of day, until the next step, the volume is `level`. The last step of a day runs
/// on past midnight until the first step of the next.
public struct VolumeStep: Sendable, Hashable {
    public let from: DayTime
    /// 0...1, at most the session's `maxVolume`.
    public let level: Double

    public init(from: DayTime, level: Double) {
        self.from = from
        self.level = level
    }
}

extension Array where Element == VolumeStep {
    /// The moments the steps fall at on `date`; a sun time the sun does not give that day has
    /// no step that day.
    private func moments(on date: CivilDate, zone: any LocalZone, location: GeoLocation?) -> [(moment: Int64, level: Double)] {
        compactMap { step in
            guard case .at(let second) = step.from.secondOfDay(on: date, zone: zone, location: location) else { return nil }
            return (zone.moment(of: date, at: second), step.level)
        }
    }

    /// The step in force at `moment`: its level, and when it began (the latest step at or
    /// before `moment`, looking back up to `days` days). nil for an empty schedule.
    public func inForce(at moment: Int64, zone: any LocalZone, location: GeoLocation?, days: Int = 2) -> (level: Double, since: Int64)? {
        let today = zone.localTime(at: moment).date
        var best: (level: Double, since: Int64)?
        for offset in -days...0 {
            for step in moments(on: today.adding(days: offset), zone: zone, location: location) where step.moment <= moment {
                if best.map({ step.moment >= $0.since }) ?? true { best = (step.level, step.moment) }
            }
        }
        return best
    }

    /// The first step after `moment`, within `days` days.
    public func next(after moment: Int64, zone: any LocalZone, location: GeoLocation?, days: Int = 2) -> Int64? {
        let today = zone.localTime(at: moment).date
        return (0...days).flatMap { moments(on: today.adding(days: $0), zone: zone, location: location).map(\.moment) }.filter { $0 > moment }.min()
    }
}
