/// A session file as its JSON document: what an edit through the API changes before the whole
/// file is written again. The file stays the one source of truth; the document is only ever
/// made from its bytes, changed, and checked by `SessionLoader` like any hand-written file.
///
/// `formatted()` writes a stable, readable layout: 2-space indent, keys in the README's order,
/// small objects and one clip per line where it fits.
public struct SessionDocument: Sendable, Equatable {
    public var fields: [String: JSONValue]
    /// Where each value began in the file read, by path (`JSONParser.offsets`): the order of
    /// the keys of the objects whose order means something (`keepsOrder`), kept when the file
    /// is written again.
    var keyOffsets: [String: Int] = [:]

    public init(fields: [String: JSONValue]) { self.fields = fields }

    public static func == (left: SessionDocument, right: SessionDocument) -> Bool { left.fields == right.fields }

    /// The document in `bytes`; a file that is not a JSON object is a problem to fix by hand.
    public init(parsing bytes: [UInt8], path: String) throws(SessionLoadError) {
        guard case .object(let fields)? = try? JSONParser.parse(SessionLoader.withoutByteOrderMark(bytes)) else {
            throw SessionLoadError(kind: .invalid, problems: ["\(path): not a JSON object; fix it by hand, then run `jukebox reload`"])
        }
        self.fields = fields
        keyOffsets = JSONParser.offsets(in: SessionLoader.withoutByteOrderMark(bytes))
    }

    /// The clip list as written; entries that are not objects are left as they are.
    public var clips: [JSONValue] {
        get { if case .array(let items)? = fields["clips"] { items } else { [] } }
        set { fields["clips"] = .array(newValue) }
    }

    /// Where the clip with `id` is in `clips`: its `id`, or the name its file gives it.
    public func clipIndex(id: String) -> Int? {
        clips.firstIndex { Self.id(of: $0) == id }
    }

    /// A clip entry's id, as the loader derives it.
    public static func id(of clip: JSONValue) -> String? {
        guard case .object(let fields) = clip else { return nil }
        if case .string(let id)? = fields["id"] { return id }
        if case .string(let file)? = fields["file"] { return SessionReader.defaultID(file: file) }
        return nil
    }

    // MARK: - Layout

    /// The order keys are written in; keys not listed follow, sorted.
    static let keyOrder: [String: [String]] = [
        "": SessionReader.sessionKeys,
        "clip": Clip.fields,
        "window": SessionReader.windowKeys,
        "volume": SessionReader.volumeStepKeys,
        "interval": ["min", "max"],
        "location": ["latitude", "longitude"],
        "at": SessionReader.atKeys,
        "output": SessionReader.outputKeys,
        "http": SessionReader.webKeys,
        "mqtt": SessionReader.mqttKeys,
        "hooks": SessionReader.hookKeys,
        "tts": SessionReader.speechKeys,
    ]
    /// A line longer than this is broken up.
    static let lineWidth = 120

    public func formatted() -> [UInt8] {
        var text = "{\n"
        let keys = Self.ordered(fields.keys, "")
        for (index, key) in keys.enumerated() {
            let value = fields[key]!
            let comma = index == keys.count - 1 ? "" : ","
            let single = "  \(Self.quoted(key)): \(inline(value, kind: Self.kind(ofChildOf: key), path: key))"
            if case .array(let items) = value, !items.isEmpty, key == "clips" || single.count > Self.lineWidth {
                text += "  \(Self.quoted(key)): [\n"
                for (position, item) in items.enumerated() {
                    text += block(item, kind: Self.kind(ofChildOf: key), indent: "    ", path: "\(key)[\(position)]")
                    text += position == items.count - 1 ? "\n" : ",\n"
                }
                text += "  ]\(comma)\n"
            } else {
                text += single + comma + "\n"
            }
        }
        text += "}\n"
        return Array(text.utf8)
    }

    /// What kind of object the items or value of `key` are, for their key order.
    static func kind(ofChildOf key: String) -> String {
        switch key {
        case "clips": "clip"
        case "activeHours", "windows", "quiet": "window"
        default: key
        }
    }

    /// An item of a broken-up list: on one line if it fits, else one key per line.
    func block(_ value: JSONValue, kind: String, indent: String, path: String) -> String {
        let single = indent + inline(value, kind: kind, path: path)
        guard single.count > Self.lineWidth, case .object(let fields) = value else { return single }
        let keys = ordered(fields.keys, kind, path: path)
        var text = indent + "{\n"
        for (index, key) in keys.enumerated() {
            text += "\(indent)  \(Self.quoted(key)): \(inline(fields[key]!, kind: Self.kind(ofChildOf: key), path: path + "." + key))"
            text += index == keys.count - 1 ? "\n" : ",\n"
        }
        return text + indent + "}"
    }

    /// Whether the order of the keys of the object at `path` means something: which plan is
    /// shown first, which alert, and which of a calendar's summaries wins.
    static func keepsOrder(_ path: String) -> Bool {
        path == "plans" || path == "alerts" || (path.hasPrefix("calendars[") && path.hasSuffix("].plans"))
    }

    /// The keys of the object at `path` in the order they are written: as the file read had
    /// them where their order means something (keys added since follow, sorted); else as
    /// `keyOrder` says.
    func ordered(_ keys: some Collection<String>, _ kind: String, path: String) -> [String] {
        guard Self.keepsOrder(path) else { return Self.ordered(keys, kind) }
        let placed = keys.compactMap { key in keyOffsets[path + "." + key].map { (key, $0) } }.sorted { $0.1 < $1.1 }.map(\.0)
        return placed + keys.filter { keyOffsets[path + "." + $0] == nil }.sorted()
    }

    /// A value on one line: `{ "a": 1, "b": [ { … } ] }`, `["mon", "tue"]`.
    func inline(_ value: JSONValue, kind: String, path: String) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number):
            return number == number.rounded() && abs(number) < 1e15 ? "\(Int64(number))" : "\(number)"
        case .string(let text): return Self.quoted(text)
        case .array(let items):
            guard !items.isEmpty else { return "[]" }
            let parts = items.enumerated().map { inline($1, kind: kind, path: "\(path)[\($0)]") }
            let scalars = items.allSatisfy { if case .object = $0 { false } else if case .array = $0 { false } else { true } }
            return scalars ? "[" + parts.joined(separator: ", ") + "]" : "[ " + parts.joined(separator: ", ") + " ]"
        case .object(let fields):
            guard !fields.isEmpty else { return "{}" }
            let parts = ordered(fields.keys, kind, path: path).map { "\(Self.quoted($0)): \(inline(fields[$0]!, kind: Self.kind(ofChildOf: $0), path: path + "." + $0))" }
            return "{ " + parts.joined(separator: ", ") + " }"
        }
    }

    static func ordered(_ keys: some Collection<String>, _ kind: String) -> [String] {
        let order = keyOrder[kind] ?? []
        let known = order.filter(keys.contains)
        return known + keys.filter { !order.contains($0) }.sorted()
    }

    static func quoted(_ text: String) -> String { JSONValue.quoted(text) }

    /// A short fingerprint of a session file's bytes (64-bit FNV-1a, in hex): it tells whether
    /// the file changed since it was read, and lets two editors notice each other's edits.
    public static func revision(of bytes: [UInt8]) -> String {
        let hash = bytes.withUnsafeBufferPointer { buffer in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            var at = 0
            while at < buffer.count {
                hash ^= UInt64(buffer[at])
                hash = hash &* 0x0000_0100_0000_01b3
                at += 1
            }
            return hash
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
