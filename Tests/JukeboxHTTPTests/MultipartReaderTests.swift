@testable import JukeboxHTTP
import JukeboxCore
import JukeboxTestSupport
import Testing

@Suite("Reading a multipart form as it arrives")
struct MultipartReaderTests {
    static let type = "multipart/form-data; boundary=----edge"

    /// A browser's form: a text field, then a file whose bytes hold what looks like the start
    /// of a boundary (CR LF - -) more than once.
    static let form: [UInt8] = Array((
        "------edge\r\n" +
        "Content-Disposition: form-data; name=\"title\"\r\n\r\n" +
        "Morning\r\n" +
        "------edge\r\n" +
        "Content-Disposition: form-data; name=\"file\"; filename=\"wake \\\"up\\\".wav\"\r\n" +
        "Content-Type: audio/wav\r\n\r\n" +
        "RIFF\r\n--\r\n----ed\r\n------edg\u{0}data\r\n" +
        "------edge--\r\n" +
        "the epilogue is ignored"
    ).utf8)

    static let expected: [MultipartReader.Event] = [
        .part(name: "title", filename: nil), .bytes(Array("Morning".utf8)),
        .part(name: "file", filename: "wake \"up\".wav"), .bytes(Array("RIFF\r\n--\r\n----ed\r\n------edg\u{0}data".utf8)),
        .end,
    ]

    /// Bytes of one part that arrive as several events are joined, so splits can be compared.
    static func joined(_ events: [MultipartReader.Event]) -> [MultipartReader.Event] {
        var result: [MultipartReader.Event] = []
        for event in events {
            if case .bytes(let more) = event, case .bytes(let before)? = result.last {
                result[result.count - 1] = .bytes(before + more)
            } else {
                result.append(event)
            }
        }
        return result
    }

    @Test func theFormIsReadTheSameHoweverItIsSplit() throws {
        for split in 0...Self.form.count {
            var reader = try MultipartReader(contentType: Self.type)
            let events = try reader.read(Self.form[..<split]) + reader.read(Self.form[split...])
            #expect(Self.joined(events) == Self.expected, "split at \(split)")
            #expect(reader.isFinished)
        }
    }

    @Test func byteByByteNothingIsHeldBackLongerThanABoundary() throws {
        var reader = try MultipartReader(contentType: Self.type)
        var events: [MultipartReader.Event] = []
        for byte in Self.form { events += try reader.read([byte]) }
        #expect(Self.joined(events) == Self.expected)
        // A long file part is handed on as it comes, not held to its end.
        var long = try MultipartReader(contentType: Self.type)
        _ = try long.read(Array("------edge\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\n".utf8))
        let piece = try long.read([UInt8](repeating: 7, count: 100_000))
        // All but what could begin a boundary (CR LF, two dashes and the 8 of the boundary, less one).
        guard case .bytes(let handed)? = piece.first, piece.count == 1 else { Issue.record("one piece of the file"); return }
        #expect(handed.count == 100_000 - 11 && handed.allSatisfy { $0 == 7 }, "\(handed.count) bytes handed on")
        #expect(!long.isFinished)
    }

    @Test func aBadContentTypeOrBoundaryIsNamed() {
        #expect(throws: MultipartReader.Malformed(reason: "the body is not multipart/form-data")) { try MultipartReader(contentType: "multipart/mixed; boundary=x") }
        #expect(throws: MultipartReader.Malformed(reason: "the Content-Type names no boundary of 1 to 70 characters")) { try MultipartReader(contentType: "multipart/form-data") }
        #expect(throws: (any Error).self) { try MultipartReader(contentType: "multipart/form-data; boundary=" + String(repeating: "b", count: 71)) }
        #expect(throws: Never.self) { try MultipartReader(contentType: "Multipart/Form-Data; charset=utf-8; boundary=\"quoted b\"") }
    }

    @Test func malformedPartsAreRefusedWithTheReason() throws {
        func reason(_ body: String) throws -> String? {
            var reader = try MultipartReader(contentType: "multipart/form-data; boundary=b")
            do { _ = try reader.read(Array(body.utf8)); return nil } catch { return error.reason }
        }
        #expect(try reason("--b\r\n\r\ncontent") == "a part has no Content-Disposition")
        #expect(try reason("--b\r\nContent-Type: text/plain\r\n\r\n") == "a part has no Content-Disposition")
        #expect(try reason("--b\r\nContent-Disposition: attachment\r\n\r\n") == "a part's Content-Disposition is not form-data with a name")
        #expect(try reason("--b\r\nno colon here\r\n\r\n") == "a part's header line has no colon")
        #expect(try reason("--bXY") == "a boundary is not followed by a line break")
        #expect(try reason("--b\r\nX-Long: " + String(repeating: "h", count: MultipartReader.maxHeaderSize)) == "a part's headers are over 8192 bytes")
        // What comes before the first boundary is skipped, as the RFC says.
        var reader = try MultipartReader(contentType: "multipart/form-data; boundary=b")
        #expect(try reader.read(Array("preamble\r\n--b--".utf8)) == [.end])
    }

    /// Mutated forms, split at random: each is read or refused with a reason, and never more
    /// bytes come out than went in.
    @Test func mutatedFormsAreReadOrRefused() throws {
        var random = SeededGenerator(seed: 7)
        var refused = 0
        for _ in 0..<3000 {
            // Insertions of what begins a boundary, to find the reader's edges.
            let form = Mutations.mutate(Self.form, using: &random) { Array([13, 10, 45, 45][...Int($0.next() % 4)]) }
            var reader = try MultipartReader(contentType: Self.type)
            let split = Int(random.next() % UInt64(form.count + 1))
            do {
                let events = try reader.read(form[..<split]) + reader.read(form[split...])
                let out = events.reduce(0) { if case .bytes(let bytes) = $1 { $0 + bytes.count } else { $0 } }
                #expect(out <= form.count)
            } catch {
                refused += 1
                #expect(!error.reason.isEmpty)
            }
        }
        #expect(refused > 0, "some mutations break the form")
    }
}
