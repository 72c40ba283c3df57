import FoundationEssentials
import JukeboxCore
import Logging
import MQTT
import Synchronization

/// Commands from MQTT, mapped to the same core commands as the socket's, with the same
/// validation. A bad payload is logged with the reason; nothing from the broker can do more.
struct MQTTCommands: Sendable {
    let topics: MQTTTopics
    let core: Core
    let logger: Logger
    /// Home Assistant came back: its discovery configs go out again.
    let homeAssistantOnline: @Sendable () async -> Void
    /// The command topics whose retained messages have been logged: once each per run.
    let retainedLogged = TopicsLogged()
    /// Refused commands are logged 20 lines a minute at most, then counted.
    let refusals = SharedLogBudget(LogBudget(what: "refused MQTT commands", maxLines: 20))

    /// What `play` takes as JSON: `{"clips": ["water", …], "cue": true, "afterQuiet": true}`.
    struct PlayRequest: Decodable {
        var clips: [String]
        var cue: Bool?
        var afterQuiet: Bool?
    }

    /// A payload longer than this is refused unread (a clip list or a title is far shorter).
    static let maxPayload = 64 * 1024

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
        do throws(JukeboxError) {
            switch name {
            case "play":
                let request = try playRequest(text)
                let queued = try await core.enqueue(request.clips, cue: request.cue ?? false, client: "mqtt", afterQuiet: request.afterQuiet ?? false)
                try await core.waitUntilDurable(queued)
            case "say":
                let request = sayRequest(text)
                try await core.waitUntilDurable(
                    try await core.say(request.text, cue: request.cue ?? false, client: "mqtt", afterQuiet: request.afterQuiet ?? false))
            case "play_title":
                try await core.waitUntilDurable(try await core.enqueue(titled: text, client: "mqtt"))
            case "skip": try await core.waitUntilDurable(await core.skip())
            case "pick": try await core.waitUntilDurable(await core.pick())
            case "pause": try await core.waitUntilDurable(await core.pause())
            case "resume": try await core.waitUntilDurable(await core.resume())
            case "paused":
                switch text.uppercased() {
                case "ON": try await core.waitUntilDurable(await core.pause())
                case "OFF": try await core.waitUntilDurable(await core.resume())
                default: return refuse(name, "\"\(text.prefix(40))\" is not ON or OFF")
                }
            case "quiet":
                switch text.uppercased() {
                case "ON": try await core.waitUntilDurable(try await core.setQuiet(.on))
                case "OFF": try await core.waitUntilDurable(try await core.setQuiet(.off))
                default:
                    guard case .success(let length) = DurationText.check(text) else {
                        return refuse(name, "\"\(text.prefix(40))\" is not ON, OFF or a length such as 30m")
                    }
                    try await core.waitUntilDurable(try await core.setQuiet(.for(length)))
                }
            case "volume":
                guard let level = Self.volumeLevel(text) else {
                    return refuse(name, "\"\(text.prefix(40))\" is not a volume from \(Core.volumeRange.lowerBound) to \(Core.volumeRange.upperBound)")
                }
                try await core.waitUntilDurable(try await core.setVolume(level))
            default:
                return refuse(name, "there is no such command (play, play_title, say, skip, pick, pause, resume, paused, quiet, volume)")
            }
        } catch {
            refuse(name, error.description)
        }
    }

    /// A volume as Home Assistant's number entity sends it (`40`, `40.0`, `39.6`), rounded to a
    /// whole step of the core's range; nil for anything else. The number is checked before
    /// it becomes an `Int`: converting an out-of-range double (`1e20`) traps, and a retained
    /// payload would then take the daemon down at every start.
    static func volumeLevel(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 32, text.allSatisfy({ "0123456789.+-eE".contains($0) }),
              let number = Double(text), number.isFinite else { return nil }
        let rounded = number.rounded()
        guard rounded >= Double(Core.volumeRange.lowerBound), rounded <= Double(Core.volumeRange.upperBound) else { return nil }
        return Int(rounded)
    }

    /// A clip id, or `{"clips": […], "cue": true, "afterQuiet": true}`.
    private func playRequest(_ text: String) throws(JukeboxError) -> PlayRequest {
        guard text.hasPrefix("{") else {
            guard !text.isEmpty else { throw .invalidParameter("the payload is empty (send a clip id, or {\"clips\": [\"id\"], \"cue\": true})") }
            return PlayRequest(clips: [text])
        }
        guard let request = try? JSONDecoder().decode(PlayRequest.self, from: Data(text.utf8)), !request.clips.isEmpty else {
            throw .invalidParameter("the payload is not a clip id or {\"clips\": [\"id\", …], \"cue\": true, \"afterQuiet\": true}")
        }
        return request
    }

    /// What `say` takes as JSON: `{"text": "Dinner is ready", "cue": true, "afterQuiet": true}`.
    struct SayRequest: Decodable {
        var text: String
        var cue: Bool?
        var afterQuiet: Bool?
    }

    /// The text itself (what Home Assistant's notify sends), or `{"text": "…", "cue": true}`.
    private func sayRequest(_ text: String) -> SayRequest {
        if text.hasPrefix("{"), let request = try? JSONDecoder().decode(SayRequest.self, from: Data(text.utf8)) {
            return request
        }
        return SayRequest(text: text)
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

/// A `LogBudget` shared by every copy of `MQTTCommands`.
final class SharedLogBudget: Sendable {
    private let budget: Mutex<LogBudget>
    init(_ budget: LogBudget) { self.budget = Mutex(budget) }
    func admit(_ line: String) -> [String] { budget.withLock { $0.admit(line, at: .now) } }
}
