/// A parsed JSON document. The session loader walks this by hand rather than using
/// `Decodable` models so that it can report *every* problem with its exact field path and
/// reject unknown keys, which synthesized decoding cannot do.
public enum JSONValue: Sendable, Equatable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// How a value is named in messages: `"25:00"`, `true`, `an object`.
    public var shortDescription: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? "\(Int64(value))" : "\(value)"
        case .string(let value): "\"\(value)\""
        case .array: "a list"
        case .object: "an object"
        }
    }
}
