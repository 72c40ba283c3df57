/// Finds where a document stops being JSON. `JSONDecoder` only says "not valid JSON" with no
/// position, and a user editing a session file by hand needs the line and column, so this
/// validating scanner runs only after decoding has failed.
public struct JSONSyntaxLocator {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var reason: String
        public var description: String { "\(reason) at line \(line), column \(column)" }
    }

    private let bytes: [UInt8]
    private var index = 0

    public static func firstError(in bytes: [UInt8]) -> Failure? {
        var scanner = JSONSyntaxLocator(bytes: bytes)
        do throws(Failure) {
            scanner.skipSpace()
            try scanner.value(depth: 0)
            scanner.skipSpace()
            if scanner.index < bytes.count { throw scanner.failure("unexpected text after the end of the document") }
            return nil
        } catch {
            return error
        }
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
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(Failure) {
        skipSpace()
        guard current == byte else { throw failure(current == nil ? "unexpected end of file, expected \(what)" : "expected \(what)") }
        index += 1
    }

    private mutating func value(depth: Int) throws(Failure) {
        guard depth < 512 else { throw failure("nesting is too deep") }
        skipSpace()
        guard let byte = current else { throw failure("unexpected end of file, expected a value") }
        switch byte {
        case UInt8(ascii: "{"):
            index += 1
            skipSpace()
            if current == UInt8(ascii: "}") { index += 1; return }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else { throw failure("expected a quoted key") }
                try string()
                try expect(UInt8(ascii: ":"), "':' after the key")
                try value(depth: depth + 1)
                skipSpace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "}"), "',' or '}'")
                return
            }
        case UInt8(ascii: "["):
            index += 1
            skipSpace()
            if current == UInt8(ascii: "]") { index += 1; return }
            while true {
                try value(depth: depth + 1)
                skipSpace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "]"), "',' or ']'")
                return
            }
        case UInt8(ascii: "\""):
            try string()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try number()
        default:
            for word in ["true", "false", "null"] where bytes[index...].starts(with: word.utf8) {
                index += word.utf8.count
                return
            }
            throw failure("unexpected character")
        }
    }

    private mutating func string() throws(Failure) {
        index += 1
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return
            case UInt8(ascii: "\\"):
                guard let escaped = current, Array("\"\\/bfnrtu".utf8).contains(escaped) else {
                    throw failure("invalid escape in a string")
                }
                index += 1
            case 0..<0x20: index -= 1; throw failure("line break or control character inside a string")
            default: break
            }
        }
        throw failure("unexpected end of file inside a string")
    }

    private mutating func number() throws(Failure) {
        let start = index
        while let byte = current, Array("+-.eE0123456789".utf8).contains(byte) { index += 1 }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard Double(text) != nil, !text.hasPrefix("+"), !(text.hasPrefix("0") && text.count > 1 && !text.hasPrefix("0.") && !text.hasPrefix("0e") && !text.hasPrefix("0E")) else {
            index = start
            throw failure("invalid number")
        }
    }
}
