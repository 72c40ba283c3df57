/// The session's `duck` section: the other players in the house (MPD, snapclients playing
/// another stream) that are lowered, or paused, while a clip sounds, and put back after.
/// Off when absent.
public struct DuckSettings: Sendable, Equatable {
    public enum Mode: String, Sendable, Equatable, CaseIterable {
        /// Their volume goes down to `level` of what it was.
        case lower
        /// They pause, and play on after.
        case pause
    }

    /// Where a player listens: a TCP port or a Unix socket.
    public typealias Address = PlayerAddress

    /// One player to duck.
    public enum Player: Sendable, Hashable, CustomStringConvertible {
        /// MPD, over its text protocol; with the file that holds its password, if it has one.
        case mpd(Address, passwordFile: String?)
        /// A snapclient (by its id or name), through snapserver's JSON-RPC control port.
        case snapclient(server: Address, client: String)
        /// The music bed's gain (the session's `bed`), lowered under every clip by its own
        /// ducker; never named in a session's `duck`, and never kept in the state file.
        case bed

        /// How the log, `status` and the state file name it.
        public var description: String {
            switch self {
            case .mpd(let address, _): "mpd \(address)"
            case .snapclient(let server, let client): "snapclient \(client) on \(server)"
            case .bed: "music bed"
            }
        }
    }

    /// What is left of each player's volume while ducked, as a fraction (−18 dB: 0.126).
    public var level: Double
    /// How long the lowering takes; the clip is heard once it is done.
    public var attack: Duration
    /// How long the raising takes, after the clip's last sample is heard.
    public var release: Duration
    public var mode: Mode
    public var players: [Player]

    public static let defaultLevel = 0.125_892_541_179_416_72  // −18 dB
    public static let defaultAttack: Duration = .milliseconds(300)
    public static let defaultRelease: Duration = .seconds(1)
    public static let rampRange: ClosedRange<Duration> = .zero ... .seconds(10)
    public static let maxPlayers = 16
    public static let defaultMPDPort = 6600
    public static let defaultSnapcastPort = 1705

    public init(level: Double = defaultLevel, attack: Duration = defaultAttack, release: Duration = defaultRelease, mode: Mode = .lower, players: [Player]) {
        self.level = level
        self.attack = attack
        self.release = release
        self.mode = mode
        self.players = players
    }
}

// The session's section: its reader, its checks and its messages.
extension SessionReader {
    static let duckKeys = ["level", "attack", "release", "mode", "mpd", "snapcast"]
    static let duckMPDKeys = ["address", "passwordFile"]
    static let duckSnapcastKeys = ["server", "clients"]

    /// `level`, `attack` and `release`, as `duck` and `bed` both have them: what is lowered
    /// goes to `level` over `attack`, and back over `release`.
    mutating func lowering(
        _ fields: [String: JSONValue], at section: String, what: String, level: inout Double, attack: inout Duration, release: inout Duration
    ) {
        if let value = fields["level"] {
            if let found = duckLevel(value) { level = found } else {
                problem("\(section).level", "\(value.shortDescription) is not a level to \(what): decibels from -60dB to 0dB such as \"-18dB\", or a fraction from 0 to 1 such as 0.2")
            }
        }
        for key in ["attack", "release"] {
            guard let value = fields[key], let length = duration(value, at: "\(section).\(key)") else { continue }
            guard DuckSettings.rampRange.contains(length) else {
                problem("\(section).\(key)", "\(value.shortDescription) is out of range (0s to 10s)")
                continue
            }
            if key == "attack" { attack = length } else { release = length }
        }
    }

    /// `duck: {"level": "-18dB", "attack": "300ms", "release": "1s", "mode": "lower",
    /// "mpd": ["localhost:6600", {"address": "/run/mpd/socket", "passwordFile": "mpd.pass"}],
    /// "snapcast": {"server": "HOST:1705", "clients": ["kitchen"]}}`.
    mutating func duck(_ value: JSONValue, sessionDirectory: String) -> DuckSettings? {
        guard let fields = object(value, at: "duck", allowed: Self.duckKeys) else { return nil }
        var settings = DuckSettings(players: [])
        lowering(fields, at: "duck", what: "lower to", level: &settings.level, attack: &settings.attack, release: &settings.release)
        if let value = fields["mode"] {
            let choices = DuckSettings.Mode.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
            if case .string(let text) = value, let mode = DuckSettings.Mode(rawValue: text) { settings.mode = mode } else {
                problem("duck.mode", "\(value.shortDescription) is not \(choices)")
            }
        }
        if let value = fields["mpd"] {
            if case .array(let items) = value, !items.isEmpty {
                for (index, item) in items.enumerated() {
                    if let player = duckMPD(item, at: "duck.mpd[\(index)]", sessionDirectory: sessionDirectory) { settings.players.append(player) }
                }
            } else {
                problem("duck.mpd", "\(value.shortDescription) is not a list of MPD addresses such as [\"localhost:6600\", \"/run/mpd/socket\"]")
            }
        }
        if let value = fields["snapcast"], let snapcast = object(value, at: "duck.snapcast", allowed: Self.duckSnapcastKeys) {
            let server = snapcast["server"].flatMap { nonEmptyString($0, at: "duck.snapcast.server") }
            let address = server.flatMap { DuckSettings.Address.parse($0, defaultPort: DuckSettings.defaultSnapcastPort) }
            if server != nil, address == nil {
                problem("duck.snapcast.server", "\(snapcast["server"]!.shortDescription) is not snapserver's control address (HOST:PORT, such as \"192.168.1.10:1705\")")
            } else if snapcast["server"] == nil {
                problem("duck.snapcast.server", "missing (snapserver's control address, such as \"localhost:1705\")")
            }
            if case .array(let clients)? = snapcast["clients"], !clients.isEmpty {
                for (index, client) in clients.enumerated() {
                    guard case .string(let name) = client, !name.isEmpty, name.utf8.count <= 200 else {
                        problem("duck.snapcast.clients[\(index)]", "\(client.shortDescription) is not a snapclient's id or name")
                        continue
                    }
                    if let address { settings.players.append(.snapclient(server: address, client: name)) }
                }
            } else {
                problem("duck.snapcast.clients", "\(snapcast["clients"]?.shortDescription ?? "missing"): list the snapclients to lower by id or name, such as [\"kitchen\"] (those playing another stream where jukeboxd plays through ALSA)")
            }
        }
        if settings.players.count > DuckSettings.maxPlayers {
            problem("duck", "names \(settings.players.count) players, more than the \(DuckSettings.maxPlayers) it may have")
        }
        if Set(settings.players).count < settings.players.count {
            problem("duck", "names a player twice")
        }
        return settings
    }

    /// `-18dB`, `-18 dB`, or a fraction from 0 to 1.
    func duckLevel(_ value: JSONValue) -> Double? {
        switch value {
        case .number(let fraction):
            return (0...1).contains(fraction) ? fraction : nil
        case .string(let text):
            let trimmed = String(text.lowercased().filter { $0 != " " })
            guard trimmed.hasSuffix("db"), let decibels = Double(trimmed.dropLast(2)), decibels.isFinite, (-60...0).contains(decibels) else { return nil }
            return SampleMath.linearGain(decibels: decibels)
        default:
            return nil
        }
    }

    mutating func duckMPD(_ value: JSONValue, at field: String, sessionDirectory: String) -> DuckSettings.Player? {
        var addressValue = value
        var passwordFile: String?
        if case .object = value {
            guard let fields = object(value, at: field, allowed: Self.duckMPDKeys) else { return nil }
            guard let given = fields["address"] else {
                problem("\(field).address", "missing (MPD's address, such as \"localhost:6600\" or \"/run/mpd/socket\")")
                return nil
            }
            addressValue = given
            passwordFile = fields["passwordFile"].flatMap { nonEmptyString($0, at: "\(field).passwordFile") }
                .map { FilePath.normalize(FilePath.join(sessionDirectory, $0)) }
        }
        guard case .string(let text) = addressValue, let address = DuckSettings.Address.parse(text, defaultPort: DuckSettings.defaultMPDPort) else {
            problem(field, "\(addressValue.shortDescription) is not MPD's address (HOST:PORT such as \"localhost:6600\", or the path of its socket such as \"/run/mpd/socket\")")
            return nil
        }
        return .mpd(address, passwordFile: passwordFile)
    }
}

extension PlayerAddress {
    /// `HOST:PORT`, `HOST` (with `defaultPort`), `[IPv6]:PORT`, or an absolute path.
    public static func parse(_ text: String, defaultPort: Int) -> PlayerAddress? {
        guard !text.isEmpty, text.utf8.count <= 255, !text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) else { return nil }
        if text.hasPrefix("/") { return .unix(path: text) }
        guard !text.contains("/"), let server = HostAndPort.parse(Substring(text), defaultPort: defaultPort) else { return nil }
        return .tcp(host: server.host, port: server.port)
    }
}
