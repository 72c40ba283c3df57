#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a `PersistedState` as JSON straight to a file descriptor, a piece at a time, in
/// the same form `JSONEncoder` with sorted keys gives (so `JSONDecoder` reads it back).
/// `JSONEncoder` builds the whole document as a tree first: for a queue of 10 000 entries
/// that tree, rebuilt on every durable change, was tens of megabytes that the allocator then
/// kept. Here memory stays at one 64 KB buffer, whatever the queue's length.
struct StateEncoder {
    private var buffer: [UInt8] = []
    private let descriptor: Int32
    private let path: String
    private(set) var total = 0
    static let chunk = 65_536

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
        buffer.reserveCapacity(Self.chunk + 4096)
    }

    /// Returns how many bytes were written.
    static func write(_ state: PersistedState, to descriptor: Int32, path: String) throws(StateFileError) -> Int {
        var encoder = StateEncoder(descriptor: descriptor, path: path)
        try encoder.state(state)
        try encoder.flush()
        return encoder.total
    }

    private mutating func state(_ state: PersistedState) throws(StateFileError) {
        raw("{")
        if let alert = state.alert {
            key("alert", first: true); raw("{")
            key("client", first: true); string(alert.client)
            key("name"); string(alert.name)
            key("since"); number(alert.since)
            if let via = alert.via { key("via"); string(via) }
            raw("}")
        }
        if let bag = state.bag {
            key("bag", first: state.alert == nil)
            raw("{")
            key("cycle", first: true); number(bag.cycle)
            if let lastPick = bag.lastPick { key("lastPick"); string(lastPick) }
            key("remaining"); raw("[")
            for (index, id) in bag.remaining.enumerated() {
                if index > 0 { raw(",") }
                string(id)
                try flushIfFull()
            }
            raw("]}")
        }
        if let ducked = state.ducked {
            key("ducked", first: state.alert == nil && state.bag == nil); raw("[")
            for (index, record) in ducked.enumerated() {
                if index > 0 { raw(",") }
                raw("{"); key("address", first: true); string(record.address)
                if let client = record.client { key("client"); string(client) }
                key("kind"); string(record.kind)
                if let lowered = record.lowered { key("lowered"); number(lowered) }
                key("mode"); string(record.mode)
                if let passwordFile = record.passwordFile { key("passwordFile"); string(passwordFile) }
                key("player"); string(record.player)
                if let ramping = record.ramping { key("ramping"); raw(ramping ? "true" : "false") }
                if let volume = record.volume { key("volume"); number(volume) }
                raw("}")
            }
            raw("]")
        }
        key("history", first: state.alert == nil && state.bag == nil && state.ducked == nil); raw("[")
        for (index, play) in state.history.enumerated() {
            if index > 0 { raw(",") }
            raw("{"); key("entry", first: true); entry(play.entry)
            key("outcome"); string(play.outcome)
            if let reason = play.reason { key("reason"); string(reason) }
            if let seq = play.seq { key("seq"); number(seq) }
            key("startedAt"); number(play.startedAt); raw("}")
            try flushIfFull()
        }
        raw("]")
        if let musicOff = state.musicOff { key("musicOff"); raw(musicOff ? "true" : "false") }
        key("nextTicket"); number(state.nextTicket)
        key("paused"); raw(state.paused ? "true" : "false")
        if let plans = state.plans {
            key("plans"); raw("{")
            for (index, date) in plans.keys.sorted().enumerated() {
                if index > 0 { raw(",") }
                let set = plans[date]!
                string(date); raw(":{")
                if let at = set.at { key("at", first: true); number(at) }
                if let by = set.by { key("by", first: set.at == nil); string(by) }
                key("plan", first: set.at == nil && set.by == nil); string(set.plan)
                raw("}")
            }
            raw("}")
        }
        if let quiet = state.quiet {
            key("quiet"); raw("{"); key("quiet", first: true); raw(quiet.quiet ? "true" : "false")
            if let until = quiet.until { key("until"); number(until) }
            raw("}")
        }
        if let started = state.started {
            key("started"); raw("{"); key("count", first: true); number(started.count); key("ticket"); number(started.ticket); raw("}")
        }
        key("stats"); raw("{")
        for (index, id) in state.stats.keys.sorted().enumerated() {
            let stats = state.stats[id]!
            if index > 0 { raw(",") }
            string(id); raw(":{")
            if let lastPlayed = stats.lastPlayed { key("lastPlayed", first: true); number(lastPlayed) }
            key("timesPlayed", first: stats.lastPlayed == nil); number(stats.timesPlayed); raw("}")
            try flushIfFull()
        }
        raw("}")
        if let until = state.timetableUntil { key("timetableUntil"); number(until) }
        key("version"); number(state.version)
        key("volume"); number(state.volume)
        if let stepAt = state.volumeStepAt { key("volumeStepAt"); number(stepAt) }
        key("waiting"); raw("[")
        for (index, waiting) in state.waiting.enumerated() {
            if index > 0 { raw(",") }
            entry(waiting)
            try flushIfFull()
        }
        raw("]}")
    }

    private mutating func entry(_ entry: PersistedState.Entry) {
        raw("{")
        var first = true
        if let afterQuiet = entry.afterQuiet { key("afterQuiet", first: true); raw(afterQuiet ? "true" : "false"); first = false }
        if let alert = entry.alert { key("alert", first: first); string(alert); first = false }
        if let at = entry.at { key("at", first: first); number(at); first = false }
        key("clip", first: first)
        clip(entry.clip)
        if let client = entry.client { key("client"); string(client) }
        if let cue = entry.cue { key("cue"); clip(cue) }
        if let now = entry.now { key("now"); raw(now ? "true" : "false") }
        if let resumeAt = entry.resumeAt {
            key("resumeAt"); raw("{"); key("frame", first: true); number(resumeAt.frame)
            key("seconds"); number(resumeAt.seconds); raw("}")
        }
        if let stopAfter = entry.stopAfter { key("stopAfter"); number(stopAfter) }
        key("ticket"); number(entry.ticket)
        if let via = entry.via { key("via"); string(via) }
        if let volume = entry.volume { key("volume"); number(volume) }
        raw("}")
    }

    private mutating func clip(_ clip: PersistedState.Clip) {
        if let duck = clip.duck { raw("{"); key("duck", first: true); raw(duck ? "true" : "false"); key("file") } else { raw("{"); key("file", first: true) }
        string(clip.file)
        key("gain"); number(clip.gain)
        key("id"); string(clip.id)
        key("path"); string(clip.path)
        if let say = clip.say { key("say"); string(say) }
        key("title"); string(clip.title)
        if let within = clip.within { key("within"); string(within) }
        raw("}")
    }

    private mutating func key(_ name: String, first: Bool = false) {
        if !first { raw(",") }
        string(name)
        raw(":")
    }

    private mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    private mutating func number(_ value: some BinaryInteger) {
        buffer.append(contentsOf: "\(value)".utf8)
    }

    /// Shortest text that reads back as the same Double; these are never NaN or infinite.
    private mutating func number(_ value: Double) {
        buffer.append(contentsOf: (value.isFinite ? "\(value)" : "0").utf8)
    }

    private mutating func string(_ text: String) {
        buffer.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                buffer.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    private mutating func flushIfFull() throws(StateFileError) {
        if buffer.count >= Self.chunk { try flush() }
    }

    mutating func flush() throws(StateFileError) {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw StateFileError(path: path, errno: errno)
            }
            offset += written
        }
        total += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }
}
