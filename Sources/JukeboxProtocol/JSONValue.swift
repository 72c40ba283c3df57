/// A parsed JSON document (see `JSONParser`). The session loader walks this by hand rather
/// than using `Decodable` models so that it can report *every* problem with its exact field path and
/// reject unknown keys, which synthesized decoding cannot do.
public enum JSONValue: Sendable, Equatable, Codable {
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

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let items = try? container.decode([JSONValue].self) {
            self = .array(items)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number):
            if number == number.rounded(), abs(number) < 1e15 { try container.encode(Int64(number)) } else { try container.encode(number) }
        case .string(let text): try container.encode(text)
        case .array(let items): try container.encode(items)
        case .object(let fields): try container.encode(fields)
        }
    }

    /// The value as compact JSON text, members in key order: what hand-written requests send.
    /// Written by appending, without `map` and `joined`: those reach generic code the
    /// client's binary does not specialise, whose first use costs the runtime a search of
    /// every conformance in the program (more than the rest of `jukebox status`).
    public var text: String {
        var text = ""
        write(to: &text)
        return text
    }

    private func write(to text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .number(let number):
            if number == number.rounded(), abs(number) < 1e15 {
                text += String(Int64(number))
            } else {
                text += number.isFinite ? "\(number)" : "null"
            }
        case .string(let string): text += Self.quoted(string)
        case .array(let items):
            text += "["
            for index in items.indices {
                if index > 0 { text += "," }
                items[index].write(to: &text)
            }
            text += "]"
        case .object(let fields):
            var keys: [String] = []
            keys.reserveCapacity(fields.count)
            for key in fields.keys { keys.append(key) }
            keys.sort()
            text += "{"
            for index in keys.indices {
                if index > 0 { text += "," }
                text += Self.quoted(keys[index])
                text += ":"
                fields[keys[index]]!.write(to: &text)
            }
            text += "}"
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
