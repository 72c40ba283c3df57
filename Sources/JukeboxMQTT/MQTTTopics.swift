import JukeboxCore

/// The topics of one jukeboxd: state under the session's `topic`, commands under
/// `TOPIC/command/`, and Home Assistant's discovery configs under its prefix.
struct MQTTTopics: Sendable {
    let base: String
    let discoveryPrefix: String
    /// Whether Home Assistant discovery is on.
    let discovery: Bool
    /// The device's id in Home Assistant and its MQTT client id: `jukeboxd_` and the topic's
    /// last level.
    let nodeID: String

    init(settings: MQTTSettings) {
        base = settings.topic
        discoveryPrefix = settings.discoveryPrefix
        discovery = settings.discovery
        let last = settings.topic.split(separator: "/").last.map(String.init) ?? "session"
        nodeID = "jukeboxd_" + String(last.unicodeScalars.map { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) ? Character($0) : "_" })
    }

    var availability: String { "\(base)/availability" }
    func state(_ name: String) -> String { "\(base)/\(name)" }
    func command(_ name: String) -> String { "\(base)/command/\(name)" }
    var homeAssistantStatus: String { "\(discoveryPrefix)/status" }
    func discovery(_ component: String, _ object: String) -> String { "\(discoveryPrefix)/\(component)/\(nodeID)/\(object)/config" }

    /// The command a topic names, or nil when it is not one of ours.
    func commandName(_ topic: String) -> String? {
        let prefix = base + "/command/"
        guard topic.hasPrefix(prefix) else { return nil }
        return String(topic.dropFirst(prefix.count))
    }
}
