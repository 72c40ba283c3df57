/// Home Assistant's media player (the session's `esphome` section): jukeboxd speaks ESPHome's
/// native API, so Home Assistant's ESPHome integration adds it as a device with a
/// `media_player` entity. Off when absent.
public struct ESPHomeSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    /// The 32-byte Noise key Home Assistant is given; nil: plaintext, allowed on loopback only.
    public var encryptionKey: [UInt8]?
    /// The device's name as Home Assistant shows it.
    public var name: String

    public static let defaultPort = 6053
    public static let defaultListen = "0.0.0.0:6053"
    public static let maxNameLength = 40
    /// ESPHome's limit on a node's name.
    public static let maxNodeNameLength = 31

    public init(host: String, port: Int = defaultPort, encryptionKey: [UInt8]?, name: String) {
        self.host = host
        self.port = port
        self.encryptionKey = encryptionKey
        self.name = name
    }

    /// Only this machine can connect: no key is needed.
    public var isLoopback: Bool { WebSettings.isLoopback(host) }

    public var listen: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The name as ESPHome names a node: lower case letters, digits and dashes
    /// (`Desk speaker` → `desk-speaker`), at most `maxNodeNameLength`.
    public var nodeName: String {
        var node = ""
        for character in name.lowercased() where node.count < Self.maxNodeNameLength {
            if character.isASCII, character.isLetter || character.isNumber {
                node.append(character)
            } else if !node.isEmpty, node.last != "-" {
                node.append("-")
            }
        }
        while node.last == "-" { node.removeLast() }
        return node.isEmpty ? "jukeboxd" : node
    }

    /// A key from the base64 text Home Assistant is given; nil unless it is 32 bytes.
    public static func key(_ text: String) -> [UInt8]? {
        guard let bytes = Base64.decode(text), bytes.count == 32 else { return nil }
        return bytes
    }

    /// A fresh key, as base64, from the system's random source.
    public static func newKey() -> String {
        var random = SystemRandomNumberGenerator()
        return Base64.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
    }
}

/// Standard base64 with padding (RFC 4648), as ESPHome writes its keys.
enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        for start in stride(from: 0, to: bytes.count, by: 3) {
            let chunk = Array(bytes[start..<min(start + 3, bytes.count)]) + [0, 0]
            let value = UInt32(chunk[0]) << 16 | UInt32(chunk[1]) << 8 | UInt32(chunk[2])
            let count = min(3, bytes.count - start)
            for index in 0..<4 {
                out.append(index <= count ? alphabet[Int(value >> (18 - 6 * UInt32(index)) & 63)] : UInt8(ascii: "="))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var bytes: [UInt8] = []
        for start in stride(from: 0, to: characters.count, by: 4) {
            var value: UInt32 = 0
            var padding = 0
            for (index, character) in characters[start..<(start + 4)].enumerated() {
                if character == UInt8(ascii: "="), start + 4 == characters.count, index >= 2 {
                    padding += 1
                    value <<= 6
                    continue
                }
                guard padding == 0, let digit = alphabet.firstIndex(of: character) else { return nil }
                value = value << 6 | UInt32(digit)
            }
            let chunk = [UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
            bytes += chunk.prefix(3 - padding)
        }
        return bytes
    }
}

// The session's section: its reader, its checks and its messages.
extension SessionReader {
    static let esphomeKeys = ["listen", "encryptionKey", "name"]

    /// `esphome: {"listen": "0.0.0.0:6053", "encryptionKey": "BASE64", "name": "desk-speaker"}`.
    mutating func esphome(_ value: JSONValue, sessionName: String) -> ESPHomeSettings? {
        guard let fields = object(value, at: "esphome", allowed: Self.esphomeKeys) else { return nil }
        var host = "0.0.0.0"
        var port = ESPHomeSettings.defaultPort
        if let listenValue = fields["listen"] {
            guard case .string(let listen) = listenValue, let parsed = WebSettings(listen: listen) else {
                problem("esphome.listen", "\(listenValue.shortDescription) is not HOST:PORT (such as \"\(ESPHomeSettings.defaultListen)\", ESPHome's port)")
                return nil
            }
            (host, port) = (parsed.host, parsed.port)
        }
        var name = String(sessionName.prefix(ESPHomeSettings.maxNameLength))
        if let nameValue = fields["name"] {
            guard case .string(let given) = nameValue, (1...ESPHomeSettings.maxNameLength).contains(given.count),
                  !given.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else {
                problem("esphome.name", "\(nameValue.shortDescription) is not a name of 1 to \(ESPHomeSettings.maxNameLength) characters (what Home Assistant shows, such as \"Desk speaker\")")
                return nil
            }
            name = given
        }
        var settings = ESPHomeSettings(host: host, port: port, encryptionKey: nil, name: name)
        switch fields["encryptionKey"] {
        case nil where settings.isLoopback:
            break
        case nil:
            problem("esphome.encryptionKey", "missing: Home Assistant connects over the network, so it needs a key. Make one with `jukeboxd --new-esphome-key`, put it here and give it to Home Assistant when it asks (or listen on 127.0.0.1 only)")
            return nil
        case .string(let text)?:
            guard let key = ESPHomeSettings.key(text) else {
                problem("esphome.encryptionKey", "is not a key: it must be the base64 of 32 bytes, as `jukeboxd --new-esphome-key` prints")
                return nil
            }
            settings.encryptionKey = key
        case let other?:
            problem("esphome.encryptionKey", "\(other.shortDescription) is not a key: it must be the base64 of 32 bytes, as `jukeboxd --new-esphome-key` prints")
            return nil
        }
        return settings
    }
}
