import Glibc
import JukeboxProtocol
import Logging

/// Where log lines go. Under systemd (`JOURNAL_STREAM` set) each entry goes to journald's
/// own socket with its metadata as fields (`CLIP`, `TICKET`, `DEVICE`, `CLIENT`…), so
/// `journalctl -o json` and `journalctl CLIP=ward` work; if that socket cannot take it, the
/// line goes to stderr starting with its syslog priority, `<3>` … `<7>`, so journald still
/// records levels. Outside systemd, lines are plain and readable. The message itself always
/// names what it is about; metadata only adds fields.
struct DaemonLogHandler: LogHandler {
    /// journald's socket for structured entries (the native protocol).
    static let journalSocket = "/run/systemd/journal/socket"

    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    let journal: Bool
    let journalSocket: String

    init(level: Logger.Level, journal: Bool, journalSocket: String = DaemonLogHandler.journalSocket) {
        self.logLevel = level
        self.journal = journal
        self.journalSocket = journalSocket
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        // Messages carry names and text from outside (MQTT payloads, HTTP fields, clip and
        // file names): a line break in one must not start a forged entry.
        let message = Self.escapingControls("\(event.message)")
        if journal {
            let fields = merged.mapValues { Logger.MetadataValue.string(Self.escapingControls("\($0)")) }
            let entry = Self.journalEntry(message: message, level: event.level, metadata: fields)
            if Self.send(entry, to: journalSocket) { return }
        }
        let line = journal
            ? "<\(Self.priority(event.level))>\(message)\n"
            : "\(Self.timestamp()) \(event.level) \(message)\n"
        // One write per line: lines from different threads never interleave.
        let bytes = Array(line.utf8)
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// `text` with every control character written as an escape (`\n`, `\r`, `\t`,
    /// `\u{1B}`…), so a log entry is one line, and no terminal escape sequence reaches
    /// whoever reads it.
    static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0) }) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where needsEscape(scalar): escaped += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// One entry in journald's native format: `NAME=value` lines, or for a value that holds a
    /// newline, the name, a newline, the value's length as 64-bit little-endian, the value
    /// and a newline. Metadata keys become upper-case field names (letters, digits and `_`).
    static func journalEntry(message: String, level: Logger.Level, metadata: Logger.Metadata) -> [UInt8] {
        var entry: [UInt8] = []
        func field(_ name: String, _ value: String) {
            let bytes = Array(value.utf8)
            entry += Array(name.utf8)
            if bytes.contains(UInt8(ascii: "\n")) {
                entry.append(UInt8(ascii: "\n"))
                withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { entry += $0 }
            } else {
                entry.append(UInt8(ascii: "="))
            }
            entry += bytes
            entry.append(UInt8(ascii: "\n"))
        }
        field("MESSAGE", message)
        field("PRIORITY", "\(priority(level))")
        field("SYSLOG_IDENTIFIER", "jukeboxd")
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            let name = String(key.uppercased().unicodeScalars.map { ("A"..."Z").contains($0) || ("0"..."9").contains($0) ? Character($0) : "_" })
            guard let first = name.first, first != "_", !first.isNumber, name.count <= 64 else { continue }
            field(name, "\(value)")
        }
        return entry
    }

    /// Sends one datagram without waiting; false when journald cannot take it (no socket,
    /// full, or an entry too large for one datagram), so the caller writes to stderr instead.
    static func send(_ entry: [UInt8], to path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard var address = UnixSocketAddress(path) else { return false }
        let sent = address.withSockaddr { socketAddress, length in
            entry.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), socketAddress, length) }
        }
        return sent == entry.count
    }

    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    static func timestamp() -> String {
        var now = time(nil)
        var fields = tm()
        localtime_r(&now, &fields)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &fields)
        // CChar is signed on x86_64 and unsigned on arm64: truncating works for both.
        return String(decoding: buffer.prefix(count).map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
    }
}
