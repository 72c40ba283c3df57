/// A parsed JSON document (see `JSONParser`). The session loader walks this by hand rather
/// than using `Decodable` models so that it can report *every* problem with its exact field path and
/// reject unknown keys, which synthesized decoding cannot do.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// How a value is named in messages: `"25:00"`, `true`, `an object`.
    public var shortDescription: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? "\(Int64(value))" : "\(value)"
        // Long strings are cut, so a message never echoes a megabyte back.
        case .string(let value): value.count > 60 ? "\"\(value.prefix(57))…\"" : "\"\(value)\""
        case .array: "a list"
        case .object: "an object"
        }
    }

    /// `text` as a JSON string, quotes included: what session files and hand-written
    /// requests write.
    public static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
