import Glibc
import Logging

/// Log lines on stderr. Under systemd (`JOURNAL_STREAM` set) each line starts with its
/// syslog priority, `<3>` … `<7>`, so journald records levels and `journalctl -p warning`
/// works; journald adds its own timestamps. Otherwise lines are plain and readable.
struct DaemonLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    let journal: Bool

    init(level: Logger.Level, journal: Bool) {
        self.logLevel = level
        self.journal = journal
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let details = merged.isEmpty ? "" : " (" + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ") + ")"
        let line = journal
            ? "<\(Self.priority(event.level))>\(event.message)\(details)\n"
            : "\(Self.timestamp()) \(event.level) \(event.message)\(details)\n"
        // One write per line: lines from different threads never interleave.
        let bytes = Array(line.utf8)
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
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
