import FoundationEssentials
import JukeboxCore
import JukeboxDispatch
import JukeboxProtocol
import Logging
import MQTT
import Synchronization

/// Commands from MQTT. Each payload is read as Home Assistant sends it (a clip id, a title,
/// ON/OFF, a number) and becomes a JSON-RPC request, answered by the same dispatcher as the
/// socket's and the web remote's: one command has one meaning, one set of checks and one
/// answer everywhere. A refusal is logged with the dispatcher's reason; nothing from the
/// broker can do more.
struct MQTTCommands: Sendable {
    let topics: MQTTTopics
    let dispatcher: RPCDispatcher
    /// The siren's commands: their clips are the siren's.
    let sirenDispatcher: RPCDispatcher
    let core: Jukebox
    let logger: Logger
    /// Home Assistant came back: its discovery configs go out again.
    let homeAssistantOnline: @Sendable () async -> Void
    /// The command topics whose retained messages have been logged: once each per run.
    let retainedLogged = TopicsLogged()
    /// Refused commands are logged 20 lines a minute at most, then counted.
    let refusals = SharedLogBudget(LogBudget(what: "refused MQTT commands", maxLines: 20))

    init(topics: MQTTTopics, core: Jukebox, logger: Logger, homeAssistantOnline: @escaping @Sendable () async -> Void) {
        self.topics = topics
        self.dispatcher = RPCDispatcher(core: core, client: "mqtt", frontEnd: .mqtt)
        self.sirenDispatcher = RPCDispatcher(core: core, client: Self.sirenClient, frontEnd: .siren)
        self.core = core
        self.logger = logger
        self.homeAssistantOnline = homeAssistantOnline
    }

    /// A payload longer than this is refused unread (a clip list or a title is far shorter).
    static let maxPayload = 64 * 1024

    /// The commands, for the refusal of an unknown one.
    static let names = ["play", "play_title", "siren", "say", "skip", "pick", "pause", "resume", "paused", "quiet", "volume", "music", "plan_today", "plan", "alert", "alert_NAME"]

    /// What the "Today's plan" select offers besides the plans: back to what the calendars and
    /// the rules say (a plan set by hand for today is cleared).
    static let automatic = "automatic"

    /// The client name the siren's clips are queued under: `siren.turn_off` ends those.
    static let sirenClient = "siren"

    func handle(_ message: MQTTMessage) async {
        if message.topic == topics.homeAssistantStatus {
            if message.text == "online" { await homeAssistantOnline() }
            return
        }
        guard let name = topics.commandName(message.topic) else { return }
        guard !message.publish.retain else {
            // A retained command would act again at every connection, and one that takes
            // something down would do so at every start. Home Assistant never retains commands.
            let line = "MQTT command \(name) ignored: it was published with the retain flag, so the broker hands it out at every connection; publish commands without it (delete the retained one with: mosquitto_pub -r -n -t '\(message.topic)')"
            switch retainedLogged.insert(name) {
            case .first: logger.warning("\(line)", metadata: ["command": "\(name)"])
            case .seen: break
            // More topics than are remembered: counted with the refusals instead.
            case .full: for line in refusals.admit(line) { logger.warning("\(line)", metadata: ["command": "\(name)"]) }
            }
            return
        }
        guard message.payload.count <= Self.maxPayload else {
            return refuse(name, "the payload is \(message.payload.count) bytes, over the \(Self.maxPayload) accepted")
        }
        let text = String(message.text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        switch Self.request(name, text) {
        case .failure(let refusal):
            refuse(name, refusal.reason)
        case .success((let method, var params)):
            if name == "siren", method == "enqueue", params["title"] == nil {
                // Turned on without a tone: the session's default (looked up only then).
                guard let first = await core.snapshot().catalog.session.defaultTone?.title else {
                    return refuse(name, "the session has no clip to play")
                }
                params["title"] = .string(first)
            }
            // The answer comes once the change is on disk, as the socket's does. The siren's
            // clips are the siren's (its state is on while one plays), whatever a payload says.
            if case .failure(let refusal) = await (name == "siren" ? sirenDispatcher : dispatcher).call(method, params) {
                refuse(name, refusal.message)
            }
        }
    }

    struct Refusal: Error { var reason: String }


    /// The JSON-RPC method and params a command's payload stands for.
    static func request(_ name: String, _ text: String) -> Result<(String, [String: JSONValue]), Refusal> {
        switch name {
        case "siren": return siren(text)
        case "play":
            // A clip id, or {"clips": ["water", …], "cue": true, "afterQuiet": true} ("now": true cuts in).
            guard text.hasPrefix("{") else {
                guard !text.isEmpty else { return .failure(Refusal(reason: "the payload is empty (send a clip id, or {\"clips\": [\"id\"], \"cue\": true})")) }
                return .success(("enqueue", ["clips": .array([.string(text)])]))
            }
            return object(text, what: "a clip id or {\"clips\": [\"id\", …], \"cue\": true, \"now\": true}").map { ("enqueue", $0) }
        case "say":
            // The text itself (what Home Assistant's notify sends), or {"text": "…", "cue": true, "now": true}.
            if text.hasPrefix("{"), case .success(let params) = object(text, what: ""), params["text"] != nil { return .success(("say", params)) }
            return .success(("say", ["text": .string(text)]))
        case "play_title": return .success(("enqueue", ["title": .string(text)]))
        case "skip", "pick", "pause", "resume": return .success((name, [:]))
        case "paused":
            switch text.uppercased() {
            case "ON": return .success(("pause", [:]))
            case "OFF": return .success(("resume", [:]))
            default: return .failure(Refusal(reason: "\"\(text.prefix(40))\" is not ON or OFF"))
            }
        case "music":
            switch text.uppercased() {
            case "ON": return .success(("bed", ["set": .string("on")]))
            case "OFF": return .success(("bed", ["set": .string("off")]))
            default: return .failure(Refusal(reason: "\"\(text.prefix(40))\" is not ON or OFF"))
            }
        case "quiet":
            switch text.uppercased() {
            case "ON": return .success(("quiet", ["set": .string("on")]))
            case "OFF": return .success(("quiet", ["set": .string("off")]))
            default:
                guard case .success = DurationText.check(text) else {
                    return .failure(Refusal(reason: "\"\(text.prefix(40))\" is not ON, OFF or a length such as 30m"))
                }
                return .success(("quiet", ["for": .string(text)]))
            }
        case "plan_today":
            // A plan's name, or `automatic`: today's plan by hand, or back to the calendars and rules.
            guard !text.isEmpty else { return .failure(Refusal(reason: "the payload is empty (send a plan's name, or \(automatic))")) }
            return .success(("setPlan", ["date": .string("today"), "plan": text == automatic ? .null : .string(text)]))
        case "plan":
            // {"date": "2026-12-03" (or today, tomorrow), "plan": "none"}; a null plan clears it.
            return object(text, what: "{\"date\": \"YYYY-MM-DD\", \"plan\": \"name\"}").map { ("setPlan", $0) }
        case "alert":
            // An alert's name starts it; OFF ends the one on.
            guard !text.isEmpty else { return .failure(Refusal(reason: "the payload is empty (send an alert's name, or OFF)")) }
            return .success(("alert", text.uppercased() == "OFF" ? ["end": .bool(true)] : ["start": .string(text)]))
        case let command where command.hasPrefix("alert_"):
            // Home Assistant's switch of one alert: ON starts it, OFF ends whichever alert is on.
            switch text.uppercased() {
            case "ON": return .success(("alert", ["start": .string(String(command.dropFirst("alert_".count)))]))
            case "OFF": return .success(("alert", ["end": .bool(true)]))
            default: return .failure(Refusal(reason: "\"\(text.prefix(40))\" is not ON or OFF"))
            }
        case "volume":
            guard let level = volumeLevel(text) else {
                return .failure(Refusal(reason: "\"\(text.prefix(40))\" is not a volume from \(Jukebox.volumeRange.lowerBound) to \(Jukebox.volumeRange.upperBound)"))
            }
            return .success(("volume", ["level": .number(Double(level))]))
        default:
            return .failure(Refusal(reason: "there is no such command (\(names.joined(separator: ", ")))"))
        }
    }

    /// Home Assistant's siren: `{"state": "ON", "tone": TITLE, "duration": SECONDS,
    /// "volume_level": 0–1}` (each but `state` only when given; `"now": true` cuts in), or
    /// `{"state": "OFF"}`; plain `ON` and `OFF` too. On queues the clip with that title (the
    /// first clip's without a tone) under the client `siren`; off ends what the siren queued.
    static func siren(_ text: String) -> Result<(String, [String: JSONValue]), Refusal> {
        let expected = "{\"state\": \"ON\", \"tone\": \"a clip's title\", \"duration\": seconds, \"volume_level\": 0 to 1} or {\"state\": \"OFF\"}"
        var fields: [String: JSONValue]
        switch text.uppercased() {
        case "ON": fields = ["state": .string("ON")]
        case "OFF": fields = ["state": .string("OFF")]
        default:
            guard text.hasPrefix("{"), case .object(let object)? = try? JSONParser.parse(Array(text.utf8)) else {
                return .failure(Refusal(reason: "the payload is not \(expected)"))
            }
            fields = object
        }
        let known: Set = ["state", "tone", "duration", "volume_level", "now"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            return .failure(Refusal(reason: "\"\(unknown.prefix(40))\" is not a siren field (state, tone, duration, volume_level, now)"))
        }
        guard case .string(let state)? = fields["state"], ["ON", "OFF"].contains(state.uppercased()) else {
            return .failure(Refusal(reason: "\"state\" must be \"ON\" or \"OFF\": the payload is not \(expected)"))
        }
        guard state.uppercased() == "ON" else { return .success(("stop", ["queuedBy": .string(sirenClient)])) }
        var params: [String: JSONValue] = [:]
        switch fields["tone"] {
        case .string(let tone)?: params["title"] = .string(tone)
        // No tone: `handle` gives it the first clip's.
        case nil, .null?: break
        case let other?: return .failure(Refusal(reason: "\"tone\" must be a clip's title, not \(other.shortDescription)"))
        }
        switch fields["duration"] {
        case nil, .null?: break
        case .number(let seconds)? where QueueEntry.Playing.stopAfter(seconds: seconds) != nil: params["stopAfter"] = .number(seconds)
        case let other?:
            let range = QueueEntry.Playing.stopAfterRange
            return .failure(Refusal(reason: "\"duration\" must be a number of seconds from \(range.lowerBound.secondsDouble) to \(Int(range.upperBound.secondsDouble)), not \(other.shortDescription)"))
        }
        switch fields["volume_level"] {
        case nil, .null?: break
        case .number(let level)? where level.isFinite && (0...1).contains(level):
            params["volume"] = .number((level * Double(Jukebox.volumeRange.upperBound)).rounded())
        case let other?: return .failure(Refusal(reason: "\"volume_level\" must be a number from 0 to 1, not \(other.shortDescription)"))
        }
        if let now = fields["now"] { params["now"] = now }
        return .success(("enqueue", params))
    }

    /// `text` as a JSON object, or a refusal saying what was expected. What MQTT queues is
    /// shown as queued by "mqtt", whatever `client` a payload names.
    private static func object(_ text: String, what: String) -> Result<[String: JSONValue], Refusal> {
        guard case .object(var fields)? = try? JSONParser.parse(Array(text.utf8)) else {
            return .failure(Refusal(reason: "the payload is not \(what)"))
        }
        fields["client"] = nil
        return .success(fields)
    }

    /// The message of a JSON-RPC error answer; nil for a result.


    /// A volume as Home Assistant's number entity sends it (`40`, `40.0`, `39.6`), rounded to a
    /// whole step of the core's range; nil for anything else. The number is checked before
    /// it becomes an `Int`: converting an out-of-range double (`1e20`) traps, and a retained
    /// payload would then take the daemon down at every start.
    static func volumeLevel(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 32, text.allSatisfy({ "0123456789.+-eE".contains($0) }),
              let number = Double(text), number.isFinite else { return nil }
        let rounded = number.rounded()
        guard rounded >= Double(Jukebox.volumeRange.lowerBound), rounded <= Double(Jukebox.volumeRange.upperBound) else { return nil }
        return Int(rounded)
    }

    private func refuse(_ command: String, _ reason: String) {
        // A broker, or anyone who may publish to it, can send refusals as fast as it likes.
        for line in refusals.admit("MQTT command \(command) refused: \(reason)") {
            logger.warning("\(line)", metadata: ["command": "\(command)"])
        }
    }
}

/// Names logged once each, shared by every copy of `MQTTCommands`. A broker can hand out
/// retained messages under any number of topics, so at most `limit` names are remembered.
final class TopicsLogged: Sendable {
    static let limit = 64
    private let names = Mutex(Set<String>())

    enum Seen { case first, seen, full }

    func insert(_ name: String) -> Seen {
        names.withLock { names in
            if names.contains(name) { return .seen }
            guard names.count < Self.limit else { return .full }
            names.insert(name)
            return .first
        }
    }
}

