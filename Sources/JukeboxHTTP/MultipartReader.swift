#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a `multipart/form-data` body as it arrives (RFC 7578), never holding a part's
/// content whole: each piece of a part is handed on as soon as it cannot be the start of the
/// next boundary. A part's headers may be at most `maxHeaderSize` bytes; anything malformed
/// is an error that names what was wrong.
struct MultipartReader {
    enum Event: Equatable {
        /// A part begins: its form field's name, and the file name for a file.
        case part(name: String, filename: String?)
        /// The next bytes of the current part.
        case bytes([UInt8])
        /// The closing boundary: the form is whole.
        case end
    }

    struct Malformed: Error, Equatable {
        var reason: String
    }

    static let maxHeaderSize = 8 * 1024
    static let maxBoundaryLength = 70

    private enum State { case preamble, afterBoundary, headers, content, epilogue }

    /// CRLF, then `--`, then the boundary.
    private let delimiter: [UInt8]
    private var state = State.preamble
    /// Bytes seen but not yet handed on. In the preamble it starts with a CRLF, so a boundary
    /// on the body's first line is found like any other.
    private var pending: [UInt8] = [13, 10]

    /// The boundary from a `Content-Type: multipart/form-data; boundary=…` header.
    init(contentType: String) throws(Malformed) {
        let parameters = Self.parameters(contentType)
        guard parameters.value.lowercased() == "multipart/form-data" else {
            throw Malformed(reason: "the body is not multipart/form-data")
        }
        guard let boundary = parameters.named["boundary"], !boundary.isEmpty, boundary.utf8.count <= Self.maxBoundaryLength else {
            throw Malformed(reason: "the Content-Type names no boundary of 1 to 70 characters")
        }
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    /// Whether the closing boundary has been read.
    var isFinished: Bool { state == .epilogue }

    /// Takes the next bytes of the body; what they complete, in order.
    mutating func read(_ bytes: some Collection<UInt8>) throws(Malformed) -> [Event] {
        if state == .epilogue { return [] }
        pending.append(contentsOf: bytes)
        var events: [Event] = []
        var start = 0
        defer { pending.removeFirst(start) }
        while true {
            switch state {
            case .preamble, .content:
                if let found = find(delimiter, from: start) {
                    if state == .content, found > start { events.append(.bytes(Array(pending[start..<found]))) }
                    start = found + delimiter.count
                    state = .afterBoundary
                } else {
                    // Keep what could be the start of a boundary split across two reads.
                    let safe = max(start, pending.count - (delimiter.count - 1))
                    if state == .content, safe > start { events.append(.bytes(Array(pending[start..<safe]))) }
                    start = safe
                    return events
                }
            case .afterBoundary:
                // "--" closes the form; otherwise optional spaces, then CRLF and a part.
                var index = start
                while index < pending.count, pending[index] == 32 || pending[index] == 9 { index += 1 }
                guard index + 2 <= pending.count else {
                    if index - start > 64 { throw Malformed(reason: "a boundary line is too long") }
                    return events
                }
                if pending[index] == 45, pending[index + 1] == 45 {
                    state = .epilogue
                    events.append(.end)
                    start = pending.count
                    return events
                }
                guard pending[index] == 13, pending[index + 1] == 10 else {
                    throw Malformed(reason: "a boundary is not followed by a line break")
                }
                start = index + 2
                state = .headers
            case .headers:
                guard pending.count - start >= 2 else { return events }
                if pending[start] == 13, pending[start + 1] == 10 { throw Malformed(reason: "a part has no Content-Disposition") }
                guard let end = find([13, 10, 13, 10], from: start) else {
                    if pending.count - start > Self.maxHeaderSize { throw Malformed(reason: "a part's headers are over \(Self.maxHeaderSize) bytes") }
                    return events
                }
                guard end - start <= Self.maxHeaderSize else { throw Malformed(reason: "a part's headers are over \(Self.maxHeaderSize) bytes") }
                events.append(try Self.part(headers: Array(pending[start..<end])))
                start = end + 4
                state = .content
            case .epilogue:
                start = pending.count
                return events
            }
        }
    }

    /// Where `needle` first occurs in `pending` at or after `from`.
    private func find(_ needle: [UInt8], from: Int) -> Int? {
        guard pending.count - from >= needle.count else { return nil }
        return pending.withUnsafeBufferPointer { haystack -> Int? in
            needle.withUnsafeBufferPointer { needle -> Int? in
                var index = from
                let last = haystack.count - needle.count
                while index <= last {
                    guard let hit = memchr(haystack.baseAddress! + index, Int32(needle[0]), last - index + 1) else { return nil }
                    let position = haystack.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                    if memcmp(haystack.baseAddress! + position, needle.baseAddress!, needle.count) == 0 { return position }
                    index = position + 1
                }
                return nil
            }
        }
    }

    private static func part(headers: [UInt8]) throws(Malformed) -> Event {
        let text = String(decoding: headers, as: UTF8.self)
        for line in text.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { throw Malformed(reason: "a part's header line has no colon") }
            guard line[..<colon].lowercased() == "content-disposition" else { continue }
            let disposition = parameters(String(line[line.index(after: colon)...]))
            guard disposition.value.lowercased() == "form-data", let name = disposition.named["name"] else {
                throw Malformed(reason: "a part's Content-Disposition is not form-data with a name")
            }
            return .part(name: name, filename: disposition.named["filename"])
        }
        throw Malformed(reason: "a part has no Content-Disposition")
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    /// `value; key=token; key="quoted \" string"`: the value, and the parameters by lowercased key.
    static func parameters(_ header: String) -> (value: String, named: [String: String]) {
        var characters = Substring(header)
        func skipSpaces() { while characters.first == " " || characters.first == "\t" { characters.removeFirst() } }
        skipSpaces()
        let value = characters.prefix { $0 != ";" }
        characters = characters.dropFirst(value.count)
        var named: [String: String] = [:]
        while characters.first == ";" {
            characters.removeFirst()
            skipSpaces()
            let key = characters.prefix { $0 != "=" && $0 != ";" }
            characters = characters.dropFirst(key.count)
            guard characters.first == "=" else { continue }
            characters.removeFirst()
            var parameter = ""
            if characters.first == "\"" {
                characters.removeFirst()
                while let next = characters.first, next != "\"" {
                    characters.removeFirst()
                    if next == "\\", let escaped = characters.first {
                        parameter.append(escaped)
                        characters.removeFirst()
                    } else {
                        parameter.append(next)
                    }
                }
                if characters.first == "\"" { characters.removeFirst() }
                characters = characters.drop { $0 != ";" }
            } else {
                let token = characters.prefix { $0 != ";" }
                characters = characters.dropFirst(token.count)
                parameter = trimmed(token)
            }
            named[trimmed(key).lowercased()] = parameter
        }
        return (trimmed(value), named)
    }
}
