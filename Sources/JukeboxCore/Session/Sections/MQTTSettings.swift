/// The session's `mqtt` section: the broker, the credentials, the topic under which jukeboxd
/// publishes its state and takes commands, and Home Assistant discovery. Off when absent.
public struct MQTTSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var username: String?
    public var passwordFile: String?
    /// `jukeboxd/NAME` unless given: state topics and command topics live under it.
    public var topic: String
    public var discovery: Bool
    public var discoveryPrefix: String

    public static let defaultPort = 1883
    public static let defaultDiscoveryPrefix = "homeassistant"

    public init(host: String, port: Int = defaultPort, username: String? = nil, passwordFile: String? = nil, topic: String, discovery: Bool = true, discoveryPrefix: String = defaultDiscoveryPrefix) {
        self.host = host
        self.port = port
        self.username = username
        self.passwordFile = passwordFile
        self.topic = topic
        self.discovery = discovery
        self.discoveryPrefix = discoveryPrefix
    }

    /// `mqtt://host:port`, `mqtt://host`, `host:port` or `host`; nil when it is none of them.
    public static func broker(_ text: String) -> (host: String, port: Int)? {
        var rest = Substring(text)
        if rest.hasPrefix("mqtt://") { rest = rest.dropFirst("mqtt://".count) }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@"), !rest.contains(" ") else { return nil }
        return HostAndPort.parse(rest, defaultPort: defaultPort)
    }

    /// A topic jukeboxd may publish under: not empty, no wildcards, no empty levels at the ends.
    public static func isTopic(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 200 && !text.contains("+") && !text.contains("#") && !text.hasPrefix("/") && !text.hasSuffix("/")
            && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// `jukeboxd/` and the session's name in lowercase letters, digits, `-` and `_`.
    public static func defaultTopic(name: String) -> String {
        let slug = String(name.lowercased().unicodeScalars.map { ($0.properties.isAlphabetic && $0.isASCII) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" ? Character($0) : "_" })
        return "jukeboxd/" + (slug.isEmpty ? "session" : slug)
    }

    public var broker: String { host.contains(":") ? "mqtt://[\(host)]:\(port)" : "mqtt://\(host):\(port)" }
}

// The session's section: its reader, its checks and its messages.
extension SessionReader {
    static let mqttKeys = ["broker", "username", "passwordFile", "topic", "discovery", "discoveryPrefix"]

    /// `mqtt: {"broker": "mqtt://host:1883", "username": "…", "passwordFile": "…", "topic":
    /// "jukeboxd/NAME", "discovery": true, "discoveryPrefix": "homeassistant"}`.
    mutating func mqtt(_ value: JSONValue, sessionDirectory: String, name: String) -> MQTTSettings? {
        guard let fields = object(value, at: "mqtt", allowed: Self.mqttKeys) else { return nil }
        guard let brokerValue = fields["broker"] else {
            problem("mqtt.broker", "missing (expected the broker, such as \"mqtt://homeassistant.local:1883\")")
            return nil
        }
        guard case .string(let text) = brokerValue, let broker = MQTTSettings.broker(text) else {
            problem("mqtt.broker", "\(brokerValue.shortDescription) is not a broker (expected mqtt://HOST:PORT, such as \"mqtt://192.168.1.10:1883\"; no TLS)")
            return nil
        }
        let username = fields["username"].flatMap { nonEmptyString($0, at: "mqtt.username") }
        let passwordFile = fields["passwordFile"].flatMap { nonEmptyString($0, at: "mqtt.passwordFile") }
            .map { FilePath.normalize(FilePath.join(sessionDirectory, $0)) }
        var topic = MQTTSettings.defaultTopic(name: name)
        if let value = fields["topic"], let given = nonEmptyString(value, at: "mqtt.topic") {
            if MQTTSettings.isTopic(given) { topic = given } else {
                problem("mqtt.topic", "\(value.shortDescription) is not a topic to publish under (no + or #, no / at either end, at most 200 bytes)")
            }
        }
        var discovery = true
        if let value = fields["discovery"] {
            if case .bool(let flag) = value { discovery = flag } else { problem("mqtt.discovery", "\(value.shortDescription) is not true or false") }
        }
        var prefix = MQTTSettings.defaultDiscoveryPrefix
        if let value = fields["discoveryPrefix"], let given = nonEmptyString(value, at: "mqtt.discoveryPrefix") {
            if MQTTSettings.isTopic(given) { prefix = given } else {
                problem("mqtt.discoveryPrefix", "\(value.shortDescription) is not a topic prefix (no + or #, no / at either end)")
            }
        }
        return MQTTSettings(host: broker.host, port: broker.port, username: username, passwordFile: passwordFile, topic: topic, discovery: discovery, discoveryPrefix: prefix)
    }
}
