import Glibc
import JukeboxCore

/// `/metrics` in Prometheus' text format (version 0.0.4): the core's counts and the process's
/// own, named as Prometheus names them (base units, `_total` for counters, `_seconds`). Written
/// by hand: what it says is a dozen lines, and a metrics library would bring two packages to
/// build for them.
enum MetricsText {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The daemon's process, as `/proc/self` tells it.
    struct Process: Sendable {
        var residentBytes: Int?
        var cpuSeconds: Double?
        var openDescriptors: Int?
        var startSeconds: Double?
    }

    static func text(_ metrics: JukeboxMetrics, process: Process) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func sample(_ name: String, _ value: Double, labels: String = "") {
            out += "\(name)\(labels.isEmpty ? "" : "{\(labels)}") \(number(value))\n"
        }
        family("jukeboxd_plays_total", "counter", "Clips and announcements that ended since the daemon started, by how they ended, and fixed times skipped or missed.")
        for outcome in ["completed", "skipped", "failed", "ended-early", "missed"] {
            sample("jukeboxd_plays_total", Double(metrics.outcomes[outcome] ?? 0), labels: "outcome=\"\(outcome)\"")
        }
        family("jukeboxd_missed_total", "counter", "Fixed times that did not play in time since the daemon started (the device missing, the daemon stopped, the clock jumped).")
        sample("jukeboxd_missed_total", Double(metrics.missed))
        family("jukeboxd_queue_length", "gauge", "Entries waiting to play.")
        sample("jukeboxd_queue_length", Double(metrics.queueLength))
        family("jukeboxd_device_up", "gauge", "1 unless the audio device is missing and being retried.")
        sample("jukeboxd_device_up", metrics.deviceUp ? 1 : 0)
        if let last = metrics.lastPlayStarted {
            family("jukeboxd_last_play_timestamp_seconds", "gauge", "When the last clip began, in seconds since the Unix epoch.")
            sample("jukeboxd_last_play_timestamp_seconds", last)
        }
        family("jukeboxd_clients", "gauge", "Clients following the daemon's events now: the socket's subscribers, the page's event streams, MQTT.")
        sample("jukeboxd_clients", Double(metrics.clients))
        if !metrics.calendars.isEmpty {
            family("jukeboxd_calendar_age_seconds", "gauge", "How long ago each day plan calendar was last read or found unchanged; absent until it is, since the start.")
            for calendar in metrics.calendars {
                if let age = calendar.age { sample("jukeboxd_calendar_age_seconds", age.rounded(), labels: "calendar=\"\(calendar.name)\"") }
            }
            family("jukeboxd_calendar_failures_total", "counter", "Reads of each day plan calendar that failed since the daemon started (its last good copy is used meanwhile).")
            for calendar in metrics.calendars {
                sample("jukeboxd_calendar_failures_total", Double(calendar.failures), labels: "calendar=\"\(calendar.name)\"")
            }
        }
        if !metrics.alerts.isEmpty {
            family("jukeboxd_alert_active", "gauge", "1 while the alert is on, 0 otherwise, for each of the session's alerts.")
            for alert in metrics.alerts { sample("jukeboxd_alert_active", alert.on ? 1 : 0, labels: "alert=\"\(alert.name)\"") }
        }
        if let writes = metrics.stateWrites {
            family("jukeboxd_state_write_seconds", "histogram", "How long each write of the state file took, to the disk and back.")
            for (bound, count) in zip(writes.bounds, writes.cumulative) {
                sample("jukeboxd_state_write_seconds_bucket", Double(count), labels: "le=\"\(number(bound))\"")
            }
            sample("jukeboxd_state_write_seconds_bucket", Double(writes.count), labels: "le=\"+Inf\"")
            sample("jukeboxd_state_write_seconds_sum", writes.sum)
            sample("jukeboxd_state_write_seconds_count", Double(writes.count))
        }
        if let resident = process.residentBytes {
            family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.")
            sample("process_resident_memory_bytes", Double(resident))
        }
        if let cpu = process.cpuSeconds {
            family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.")
            sample("process_cpu_seconds_total", cpu)
        }
        if let open = process.openDescriptors {
            family("process_open_fds", "gauge", "Number of open file descriptors.")
            sample("process_open_fds", Double(open))
        }
        if let start = process.startSeconds {
            family("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch in seconds.")
            sample("process_start_time_seconds", start)
        }
        return out
    }

    /// Whole numbers without a decimal point; others as Swift writes a Double.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Reads `/proc/self`: off the cooperative pool, as every file read is.
    static func readProcess() -> Process {
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var process = Process()
        if let statm = file("/proc/self/statm")?.split(separator: " "), statm.count > 1, let pages = Int(statm[1]) {
            process.residentBytes = pages * pageSize
        }
        // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15, starttime 22.
        if let stat = file("/proc/self/stat"), let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 19, let user = Double(fields[11]), let system = Double(fields[12]), ticks > 0 {
                process.cpuSeconds = (user + system) / ticks
                if let started = Double(fields[19]), let boot = bootTime() { process.startSeconds = boot + started / ticks }
            }
        }
        if let directory = opendir("/proc/self/fd") {
            var count = 0
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != ".", name != ".." { count += 1 }
            }
            closedir(directory)
            // Less the one this count itself held open.
            process.openDescriptors = max(count - 1, 0)
        }
        return process
    }

    private static func bootTime() -> Double? {
        guard let stat = file("/proc/stat") else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingPrefix(" "))
        }
        return nil
    }

    /// A small file under /proc, whole (at most 64 KiB).
    private static func file(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 65_536)
        var total = 0
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + total, $0.count - total) }
            if count <= 0 { break }
            total += count
        }
        return String(decoding: bytes[..<total], as: UTF8.self)
    }
}
