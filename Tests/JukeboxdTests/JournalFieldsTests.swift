import Glibc
import JukeboxProtocol
import JukeboxTestSupport
import Logging
import Testing
@testable import jukeboxd

/// Under systemd, log entries go to journald's socket with their metadata as fields.
@Suite("Journal fields", .timeLimit(.minutes(1)))
struct JournalFieldsTests {
    @Test func anEntryCarriesItsMetadataAsFields() throws {
        let entry = DaemonLogHandler.journalEntry(
            message: "played ward (ward.wav, 2s)", level: .info, metadata: ["clip": "ward", "ticket": "7", "x-y": "z", "_hidden": "no"])
        #expect(String(decoding: entry, as: UTF8.self) == "MESSAGE=played ward (ward.wav, 2s)\nPRIORITY=6\nSYSLOG_IDENTIFIER=jukeboxd\nCLIP=ward\nTICKET=7\nX_Y=z\n")
    }

    @Test func aValueWithANewlineIsSentWithItsLength() {
        let entry = DaemonLogHandler.journalEntry(message: "two\nlines", level: .error, metadata: [:])
        // In named parts: one sum of them is more than Swift 6.2's type checker takes.
        let name: [UInt8] = Array("MESSAGE\n".utf8)
        let length: [UInt8] = [9, 0, 0, 0, 0, 0, 0, 0]
        let value: [UInt8] = Array("two\nlines".utf8)
        let expected: [UInt8] = name + length + value + [10]
        let start: [UInt8] = Array(entry.prefix(expected.count))
        #expect(start == expected)
    }

    /// A line break or a terminal escape from outside (an MQTT payload, a file name) is
    /// written as an escape, so it cannot start a forged entry or drive the reader's terminal.
    @Test(arguments: [
        ("plain words, é and 🎵", "plain words, é and 🎵"), ("nosuch\n2026-01-01 notice forged", #"nosuch\n2026-01-01 notice forged"#),
        ("a\rb\tc", #"a\rb\tc"#), ("\u{1B}[2J", #"\u{1B}[2J"#), ("\u{7F}\u{85}\u{2028}", #"\u{7F}\u{85}\u{2028}"#), ("\u{0}", #"\u{0}"#),
    ])
    func controlCharactersAreEscaped(text: String, logged: String) {
        #expect(DaemonLogHandler.escapingControls(text) == logged)
    }

    /// A socket standing in for journald's receives each entry as one datagram.
    @Test func entriesReachTheJournalSocket() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("journal.socket")
        let receiver = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(receiver) }
        var address = try #require(UnixSocketAddress(path))
        #expect(address.withSockaddr { bind(receiver, $0, $1) } == 0)
        let handler = DaemonLogHandler(level: .info, journal: true, journalSocket: path)
        var logger = Logger(label: "test") { _ in handler }
        logger.logLevel = .info
        logger.warning("failed ward: ward.wav: no such file", metadata: ["clip": "ward", "device": "plughw:1,0"])
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(receiver, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        #expect(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
            == "MESSAGE=failed ward: ward.wav: no such file\nPRIORITY=4\nSYSLOG_IDENTIFIER=jukeboxd\nCLIP=ward\nDEVICE=plughw:1,0\n")
    }
}
