import FoundationEssentials

// Reading results from a parsed reply (`JSONParser`) by hand, for the client's commonest
// commands. The first use of `Decodable` in a process costs more than the round trip to
// jukeboxd: the runtime looks up each generic type it instantiates, across every
// conformance in the program. The daemon encodes these same types with `Encodable`, and
// tests check that both ways agree.

/// A result the client reads from a parsed JSON value: every reply is parsed once, by
/// `JSONParser`, and its result read through this. The commonest commands' results are read
/// by hand (below); the others through `Decodable`, from the result's own text.
public protocol JSONReadable {
    init(json: JSONValue) throws(JSONShapeError)
}

extension JSONReadable where Self: Decodable {
    public init(json: JSONValue) throws(JSONShapeError) {
        do {
            self = try JSONDecoder().decode(Self.self, from: Data(json.text.utf8))
        } catch {
            throw JSONShapeError(field: "result")
        }
    }
}

extension NextResult: JSONReadable {}
extension PlanResult: JSONReadable {}
extension HistoryResult: JSONReadable {}
extension VolumeResult: JSONReadable {}
extension SubscribeResult: JSONReadable {}
extension SessionResult: JSONReadable {}
extension EditResult: JSONReadable {}
extension UploadResult: JSONReadable {}
extension WebCAResult: JSONReadable {}
extension LoudnessResult: JSONReadable {}
extension EventParams: JSONReadable {}
extension RPCError: JSONReadable {}

/// A reply whose JSON does not have the shape of the result it should be.
public struct JSONShapeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public init(field: String) { self.field = field }
    public var description: String { "the field \"\(field)\" is missing or of the wrong kind" }
}

/// The members of a JSON object, read by type.
public struct JSONFields {
    private let members: [String: JSONValue]

    public init(_ value: JSONValue, _ what: String = "result") throws(JSONShapeError) {
        guard case .object(let members) = value else { throw JSONShapeError(field: what) }
        self.members = members
    }

    /// The member, or nil when it is absent or `null`.
    public subscript(_ key: String) -> JSONValue? {
        if let value = members[key], value != .null { value } else { nil }
    }

    public func string(_ key: String) throws(JSONShapeError) -> String {
        guard let value = try optionalString(key) else { throw JSONShapeError(field: key) }
        return value
    }

    public func optionalString(_ key: String) throws(JSONShapeError) -> String? {
        switch self[key] {
        case nil: return nil
        case .string(let value)?: return value
        default: throw JSONShapeError(field: key)
        }
    }

    /// A list of strings, or nil when the key is absent.
    public func optionalStrings(_ key: String) throws(JSONShapeError) -> [String]? {
        switch self[key] {
        case nil: return nil
        case .array(let values)?:
            var strings: [String] = []
            for value in values {
                guard case .string(let text) = value else { throw JSONShapeError(field: key) }
                strings.append(text)
            }
            return strings
        default: throw JSONShapeError(field: key)
        }
    }

    public func bool(_ key: String) throws(JSONShapeError) -> Bool {
        guard case .bool(let value)? = self[key] else { throw JSONShapeError(field: key) }
        return value
    }

    public func optionalBool(_ key: String) throws(JSONShapeError) -> Bool? {
        switch self[key] {
        case nil: return nil
        case .bool(let value)?: return value
        default: throw JSONShapeError(field: key)
        }
    }

    public func double(_ key: String) throws(JSONShapeError) -> Double {
        guard let value = try optionalDouble(key) else { throw JSONShapeError(field: key) }
        return value
    }

    public func optionalDouble(_ key: String) throws(JSONShapeError) -> Double? {
        switch self[key] {
        case nil: return nil
        case .number(let value)?: return value
        default: throw JSONShapeError(field: key)
        }
    }

    public func int(_ key: String) throws(JSONShapeError) -> Int {
        guard let value = try optionalInt(key) else { throw JSONShapeError(field: key) }
        return value
    }

    /// A whole number within `Int` (checked before it becomes one: an out-of-range double traps).
    public func optionalInt(_ key: String) throws(JSONShapeError) -> Int? {
        guard let value = try optionalDouble(key) else { return nil }
        guard value == value.rounded(), abs(value) < 9.0e15 else { throw JSONShapeError(field: key) }
        return Int(value)
    }

    public func ticket(_ key: String) throws(JSONShapeError) -> UInt64 {
        let value = try int(key)
        guard value >= 0 else { throw JSONShapeError(field: key) }
        return UInt64(value)
    }

    public func tickets(_ key: String) throws(JSONShapeError) -> [UInt64] {
        guard case .array(let values)? = self[key] else { throw JSONShapeError(field: key) }
        var tickets: [UInt64] = []
        for value in values {
            guard case .number(let number) = value, number >= 0, number == number.rounded(), number < 9.0e15 else { throw JSONShapeError(field: key) }
            tickets.append(UInt64(number))
        }
        return tickets
    }

    public func read<T: JSONReadable>(_ key: String, as type: T.Type) throws(JSONShapeError) -> T? {
        guard let value = self[key] else { return nil }
        return try T(json: value)
    }

    public func list<T: JSONReadable>(_ key: String, of type: T.Type) throws(JSONShapeError) -> [T] {
        guard case .array(let values)? = self[key] else { throw JSONShapeError(field: key) }
        var items: [T] = []
        for value in values { items.append(try T(json: value)) }
        return items
    }
}

extension EntryInfo: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json, "entry")
        self.init(
            ticket: try fields.ticket("ticket"), clip: try fields.string("clip"), title: try fields.string("title"),
            file: try fields.string("file"), origin: try fields.string("origin"), position: try fields.optionalInt("position"),
            say: try fields.optionalString("say"), afterQuiet: try fields.optionalBool("afterQuiet"), now: try fields.optionalBool("now"),
            resumeAt: try fields.optionalDouble("resumeAt"), volume: try fields.optionalInt("volume"), stopAfter: try fields.optionalDouble("stopAfter"),
            alert: try fields.optionalString("alert"))
    }
}

extension StatusResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json)
        self.init(
            session: try fields.string("session"), device: try fields.string("device"), deviceState: try fields.string("deviceState"),
            playing: try fields.read("playing", as: EntryInfo.self), waitingForDevice: try fields.read("waitingForDevice", as: EntryInfo.self),
            queueLength: try fields.int("queueLength"), paused: try fields.bool("paused"), volume: try fields.int("volume"),
            nextPick: try fields.optionalDouble("nextPick"), uptime: try fields.double("uptime"), played: try fields.int("played"),
            failed: try fields.int("failed"), underruns: try fields.optionalInt("underruns"), quiet: try fields.read("quiet", as: QuietInfo.self),
            ducked: try fields.optionalStrings("ducked"), bed: try fields.read("bed", as: BedInfo.self), version: try fields.optionalString("version"),
            plan: try fields.read("plan", as: PlanDay.self), plans: try fields.optionalStrings("plans"), calendars: fields["calendars"] == nil ? nil : try fields.list("calendars", of: CalendarInfo.self),
            alert: try fields.read("alert", as: AlertInfo.self), alerts: try fields.optionalStrings("alerts"))
    }
}

extension AlertInfo: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json, "alert")
        self.init(name: try fields.string("name"), since: try fields.double("since"), by: try fields.string("by"), soundings: try fields.int("soundings"))
    }
}

extension AlertResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json)
        self.init(alert: try fields.read("alert", as: AlertInfo.self), ended: try fields.read("ended", as: AlertInfo.self), alerts: try fields.optionalStrings("alerts") ?? [])
    }
}

extension PlanDay: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json, "plan")
        var times: [Time] = []
        guard case .array(let items)? = fields["times"] else { throw JSONShapeError(field: "times") }
        for item in items {
            let time = try JSONFields(item, "times")
            times.append(Time(at: try time.string("at"), clip: try time.string("clip")))
        }
        let plan: String? = if case .null? = fields["plan"] { nil } else { try fields.optionalString("plan") }
        self.init(date: try fields.string("date"), plan: plan, why: try fields.string("why"), times: times)
    }
}

extension CalendarInfo: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json, "calendars")
        self.init(
            name: try fields.string("name"), source: try fields.string("source"), readAt: try fields.optionalDouble("readAt"),
            problem: try fields.optionalString("problem"), failures: try fields.int("failures"))
    }
}

extension HealthResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json)
        self.init(healthy: try fields.bool("healthy"), problem: try fields.optionalString("problem"), alert: try fields.optionalString("alert"))
    }
}

extension SoundTestResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json)
        self.init(
            device: try fields.string("device"), format: try fields.string("format"), deviceFormat: try fields.optionalString("deviceFormat"),
            seconds: try fields.double("seconds"), took: try fields.double("took"), realTime: try fields.bool("realTime"))
    }
}

extension BedInfo: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json, "bed")
        self.init(
            pipe: try fields.string("pipe"), on: try fields.bool("on"), music: try fields.string("music"), ducked: try fields.bool("ducked"),
            problem: try fields.optionalString("problem"))
    }
}

extension QuietInfo: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json, "quiet")
        self.init(quiet: try fields.bool("quiet"), byHand: try fields.bool("byHand"), until: try fields.optionalDouble("until"), held: try fields.optionalInt("held"))
    }
}

extension EnqueueResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        self.init(entries: try JSONFields(json).list("entries", of: EntryInfo.self))
    }
}

extension SkipResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        self.init(skipped: try JSONFields(json).read("skipped", as: EntryInfo.self))
    }
}

extension StopResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json)
        self.init(removed: try fields.tickets("removed"), skipped: try fields.read("skipped", as: EntryInfo.self))
    }
}

extension PauseResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        self.init(paused: try JSONFields(json).bool("paused"))
    }
}

extension PickResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        self.init(entry: try JSONFields(json).read("entry", as: EntryInfo.self))
    }
}

extension ReloadResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json)
        self.init(session: try fields.string("session"), clips: try fields.int("clips"))
    }
}

extension RemoveResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json)
        self.init(removed: try fields.tickets("removed"), notWaiting: try fields.tickets("notWaiting"))
    }
}

extension PlayingInfo: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json, "playing")
        guard let entry = try fields.read("entry", as: EntryInfo.self) else { throw JSONShapeError(field: "entry") }
        self.init(
            entry: entry, elapsed: try fields.optionalDouble("elapsed"), total: try fields.optionalDouble("total"),
            startedAt: try fields.optionalDouble("startedAt"), paused: try fields.bool("paused"))
    }
}

extension QueueResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json)
        self.init(
            playing: try fields.read("playing", as: PlayingInfo.self), waitingForDevice: try fields.read("waitingForDevice", as: EntryInfo.self),
            waiting: try fields.list("waiting", of: EntryInfo.self), held: fields["held"] == nil ? nil : try fields.list("held", of: EntryInfo.self))
    }
}

extension ClipInfo: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        let fields = try JSONFields(json, "clip")
        self.init(
            id: try fields.string("id"), title: try fields.string("title"), file: try fields.string("file"),
            duration: try fields.optionalDouble("duration"), enabled: try fields.bool("enabled"), windowOpen: try fields.bool("windowOpen"),
            timesPlayed: try fields.int("timesPlayed"), lastPlayed: try fields.optionalDouble("lastPlayed"), problem: try fields.optionalString("problem"))
    }
}

extension ClipsResult: JSONReadable {
    public init(json: JSONValue) throws(JSONShapeError) {
        self.init(clips: try JSONFields(json).list("clips", of: ClipInfo.self))
    }
}
