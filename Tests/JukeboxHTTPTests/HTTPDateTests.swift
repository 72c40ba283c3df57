@testable import JukeboxHTTP
import Testing

@Suite("HTTP Date header")
struct HTTPDateTests {
    /// RFC 9110's own example, a leap day, and single-digit days and hours.
    @Test func theDateIsAnIMFFixdate() {
        #expect(HTTPDate.string(secondsSince1970: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.string(secondsSince1970: 1_709_164_800) == "Thu, 29 Feb 2024 00:00:00 GMT")
        #expect(HTTPDate.string(secondsSince1970: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.string(secondsSince1970: 1_795_395_661) == "Mon, 23 Nov 2026 01:01:01 GMT")
    }
}
