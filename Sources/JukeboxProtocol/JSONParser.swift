/// Parses JSON into a `JSONValue` in one pass, and on bad input says where: line, column and
/// what was expected, which a user editing a session file by hand needs and `JSONDecoder`
/// does not give. It is also much faster than decoding `JSONValue` through `Decodable`, which
/// matters for 100 000-clip sessions and for every control request.
public struct JSONParser {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var reason: String
        /// The text is JSON, but holds what no field can take (a number too large to hold).
        public var validJSON = false
        public var description: String { "\(reason) at line \(line), column \(column)" }
    }

    private let bytes: [UInt8]
    private var index = 0
    /// Where each value starts, by path, when asked for (`lines(in:)`); nil on the fast path.
    private var starts: [String: Int]?

    public static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        let value = try parser.value(depth: 0, path: nil)
        parser.skipSpace()
        if parser.index < bytes.count { throw parser.failure("unexpected text after the end of the document") }
        return value
    }

    /// The line each value is on, by its path as the session loader names fields:
    /// `clips[3].windows[0].from`, and "" for the document. For an object member that is
    /// the line of its key. Parses again, so it is only worth it once there is a problem to
    /// report; empty for text that is not JSON.
    public static func lines(in bytes: [UInt8]) -> [String: Int] {
        let starts = offsets(in: bytes)
        guard !starts.isEmpty else { return [:] }
        var lineStarts = [0]
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") { lineStarts.append(offset + 1) }
        return starts.mapValues { offset in
            // The number of line starts at or before `offset` is its line, counting from 1.
            var low = 0, high = lineStarts.count
            while low < high {
                let middle = (low + high) / 2
                if lineStarts[middle] <= offset { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    /// Where each value starts in `bytes`, by path as `lines(in:)` names them: what tells
    /// the order of an object's keys, which `JSONValue` does not keep. Empty for text that is
    /// not JSON.
    public static func offsets(in bytes: [UInt8]) -> [String: Int] {
        var parser = JSONParser(bytes: bytes)
        parser.starts = [:]
        guard (try? parser.value(depth: 0, path: "")) != nil else { return [:] }
        return parser.starts ?? [:]
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func failure(_ reason: String) -> Failure {
        var line = 1, column = 1
        for byte in bytes[..<min(index, bytes.count)] {
            if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
        }
        return Failure(line: line, column: column, reason: reason)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        // Through the buffer, not `current`: a file padded with megabytes of blanks is read
        // here, and this is the loop an unoptimised build (tests under emulation) feels.
        index = bytes.withUnsafeBufferPointer { buffer in
            var at = index
            while at < buffer.count {
                let byte = buffer[at]
                guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { break }
                at += 1
            }
            return at
        }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(Failure) {
        skipSpace()
        guard current == byte else { throw failure(current == nil ? "unexpected end of file, expected \(what)" : "expected \(what)") }
        index += 1
    }

    /// JSON allows no comma after the last member or item, which people often leave in;
    /// say so rather than "unexpected character".
    private mutating func refuseTrailingComma(before closing: UInt8) throws(Failure) {
        skipSpace()
        if current == closing {
            throw failure("trailing comma before '\(Character(Unicode.Scalar(closing)))' (JSON allows none after the last \(closing == UInt8(ascii: "}") ? "member" : "item"))")
        }
    }

    private mutating func value(depth: Int, path: String?) throws(Failure) -> JSONValue {
        guard depth < 512 else { throw failure("nesting is too deep") }
        skipSpace()
        guard let byte = current else { throw failure("unexpected end of file, expected a value") }
        if let path, starts?[path] == nil { starts?[path] = index }
        switch byte {
        case UInt8(ascii: "{"):
            index += 1
            var fields: [String: JSONValue] = [:]
            skipSpace()
            if current == UInt8(ascii: "}") { index += 1; return .object(fields) }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else { throw failure("expected a quoted key") }
                let keyStart = index
                let key = try string()
                if fields[key] != nil {
                    // Taking the last silently would hide a typo'd copy; say which key, and where.
                    index = keyStart
                    throw failure("duplicate key \"\(key)\"")
                }
                try expect(UInt8(ascii: ":"), "':' after the key")
                let member = path.map { $0.isEmpty ? key : $0 + "." + key }
                if let member { starts?[member] = keyStart }
                fields[key] = try value(depth: depth + 1, path: member)
                skipSpace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    try refuseTrailingComma(before: UInt8(ascii: "}"))
                    continue
                }
                try expect(UInt8(ascii: "}"), "',' or '}'")
                return .object(fields)
            }
        case UInt8(ascii: "["):
            index += 1
            var items: [JSONValue] = []
            skipSpace()
            if current == UInt8(ascii: "]") { index += 1; return .array(items) }
            while true {
                items.append(try value(depth: depth + 1, path: path.map { "\($0)[\(items.count)]" }))
                skipSpace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    try refuseTrailingComma(before: UInt8(ascii: "]"))
                    continue
                }
                try expect(UInt8(ascii: "]"), "',' or ']'")
                return .array(items)
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try number())
        default:
            for (word, value) in [("true", JSONValue.bool(true)), ("false", .bool(false)), ("null", .null)]
            where bytes[index...].starts(with: word.utf8) {
                index += word.utf8.count
                return value
            }
            throw failure("unexpected character")
        }
    }

    private mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        var unescaped: [UInt8]?
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                let text = unescaped ?? Array(bytes[start..<index])
                index += 1
                guard let string = String(validating: text, as: UTF8.self) else {
                    index = start - 1
                    throw failure("a string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                if unescaped == nil { unescaped = Array(bytes[start..<index]) }
                index += 1
                try escape(into: &unescaped!)
            case 0..<0x20:
                throw failure("line break or control character inside a string")
            default:
                unescaped?.append(byte)
                index += 1
            }
        }
        throw failure("unexpected end of file inside a string")
    }

    /// Reads the escape after a backslash and appends what it stands for as UTF-8.
    private mutating func escape(into text: inout [UInt8]) throws(Failure) {
        guard let escaped = current else { throw failure("unexpected end of file inside a string") }
        index += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                // A surrogate pair: the low half must follow as another \u escape.
                guard bytes[index...].starts(with: Array("\\u".utf8)) else { throw failure("invalid escape in a string") }
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw failure("invalid escape in a string") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw failure("invalid escape in a string") }
            text.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            index -= 2
            throw failure("invalid escape in a string")
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
            throw failure("invalid escape in a string")
        }
        index += 4
        return value
    }

    private mutating func number() throws(Failure) -> Double {
        let start = index
        while let byte = current, Array("+-.eE0123456789".utf8).contains(byte) { index += 1 }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), !text.hasPrefix("+"),
              !(text.hasPrefix("0") && text.count > 1 && !text.hasPrefix("0.") && !text.hasPrefix("0e") && !text.hasPrefix("0E"))
        else {
            index = start
            throw failure("invalid number")
        }
        // 1e999 is valid JSON but no number a Double holds: it would be infinity, which no
        // field takes and no JSON can write back.
        guard value.isFinite else {
            index = start
            var tooLarge = failure("the number \(text.prefix(40)) is too large")
            tooLarge.validJSON = true
            throw tooLarge
        }
        return value
    }
}
