/// Days as session files name them. Raw values follow `struct tm`'s `tm_wday` (Sunday = 0).
public enum Weekday: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case sun = 0, mon, tue, wed, thu, fri, sat

    public init?(name: String) {
        guard let day = Weekday.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
        self = day
    }

    public var previous: Weekday { Weekday(rawValue: (rawValue + 6) % 7)! }

    public var description: String {
        switch self {
        case .sun: "sun"
        case .mon: "mon"
        case .tue: "tue"
        case .wed: "wed"
        case .thu: "thu"
        case .fri: "fri"
        case .sat: "sat"
        }
    }
}
