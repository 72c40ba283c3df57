#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The machine's processes as /proc shows them: enough to find every descendant of a program
/// the daemon started, whatever group or session it moved to.
struct ProcessTable {
    struct Entry: Hashable, Sendable {
        var pid: pid_t
        var parent: pid_t
        var group: pid_t
        /// When it started, in clock ticks since boot: with the pid, it names one process,
        /// never a later one that got the same number.
        var startTime: UInt64
        var state: Character

        static func == (a: Entry, b: Entry) -> Bool { a.pid == b.pid && a.startTime == b.startTime }
        func hash(into hasher: inout Hasher) {
            hasher.combine(pid)
            hasher.combine(startTime)
        }
    }

    var entries: [Entry]

    static func read() -> ProcessTable {
        var entries: [Entry] = []
        guard let folder = opendir("/proc") else { return ProcessTable(entries: []) }
        defer { closedir(folder) }
        while let item = readdir(folder) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = pid_t(name), let entry = entry(pid) else { continue }
            entries.append(entry)
        }
        return ProcessTable(entries: entries)
    }

    /// `/proc/PID/stat`: "pid (name) state ppid pgrp session … starttime (field 22)". The
    /// name may hold spaces and parentheses, so the fields are counted from its last `)`.
    static func entry(_ pid: pid_t) -> Entry? {
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0, let close = bytes.prefix(count).lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = String(decoding: bytes[(close + 1)..<count], as: UTF8.self).split(separator: " ")
        // After the name: state(0) ppid(1) pgrp(2) … starttime(19).
        guard fields.count > 19, let state = fields[0].first, let parent = pid_t(fields[1]), let group = pid_t(fields[2]),
              let start = UInt64(fields[19]) else { return nil }
        return Entry(pid: pid, parent: parent, group: group, startTime: start, state: state)
    }

    /// Every process whose chain of parents leads to `pid`.
    func descendants(of pid: pid_t) -> [Entry] {
        var children: [pid_t: [Entry]] = [:]
        for entry in entries { children[entry.parent, default: []].append(entry) }
        var found: [Entry] = []
        var next = children[pid] ?? []
        while let entry = next.popLast() {
            found.append(entry)
            next += children[entry.pid] ?? []
        }
        return found
    }
}
