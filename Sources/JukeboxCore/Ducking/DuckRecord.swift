/// One player jukeboxd has lowered or paused, as the state file keeps it: on disk before the
/// player is touched, so that whatever happens to the daemon, the next start puts it back.
public struct DuckRecord: Codable, Sendable, Equatable {
    /// `DuckSettings.Player.description`: how the log and `status` name it.
    public var player: String
    /// `mpd` or `snapclient`.
    public var kind: String
    /// MPD's address, or snapserver's.
    public var address: String
    public var client: String?
    public var passwordFile: String?
    /// `lower` or `pause`.
    public var mode: String
    /// Its volume before (lower), and the volume jukeboxd lowers it to.
    public var volume: Int?
    public var lowered: Int?
    /// true while a ramp between the two is under way: a player found anywhere between them
    /// after a crash then was left there by jukeboxd, not by someone.
    public var ramping: Bool?

    public init(_ player: DuckSettings.Player, mode: DuckSettings.Mode, volume: Int?, lowered: Int?, ramping: Bool? = nil) {
        self.ramping = ramping
        self.player = player.description
        switch player {
        case .mpd(let address, let passwordFile):
            (kind, self.address, client, self.passwordFile) = ("mpd", address.description, nil, passwordFile)
        case .snapclient(let server, let client):
            (kind, self.address, self.client, passwordFile) = ("snapclient", server.description, client, nil)
        case .bed:
            (kind, address, client, passwordFile) = ("bed", "", nil, nil)
        }
        self.mode = mode.rawValue
        self.volume = volume
        self.lowered = lowered
    }

    private enum CodingKeys: String, CodingKey { case player, kind, address, client, passwordFile, mode, volume, lowered, ramping }

    /// Read leniently: the state file may have been edited by hand. A level is held to 0–100
    /// (a level out of range, or not a number, is none), and a record with fields missing is
    /// read as far as it goes: `Ducker.restore` drops one that names no player, with a
    /// warning, rather than the whole state being set aside.
    public init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys) -> String? { (try? fields.decodeIfPresent(String.self, forKey: key)) ?? nil }
        func level(_ key: CodingKeys) -> Int? {
            guard let value = (try? fields.decodeIfPresent(Double.self, forKey: key)) ?? nil, value.isFinite else { return nil }
            return Int(min(max(value, 0), 100).rounded())
        }
        player = text(.player) ?? ""
        kind = text(.kind) ?? ""
        address = text(.address) ?? ""
        client = text(.client)
        passwordFile = text(.passwordFile)
        mode = text(.mode) ?? DuckSettings.Mode.lower.rawValue
        volume = level(.volume)
        lowered = level(.lowered)
        ramping = (try? fields.decodeIfPresent(Bool.self, forKey: .ramping)) ?? nil
    }

    /// The player it names, to reach it again after a restart. The bed's record is never
    /// saved, and a state file that names it names nothing to put back.
    public var target: DuckSettings.Player? {
        if kind == "bed" { return .bed }
        let port = kind == "mpd" ? DuckSettings.defaultMPDPort : DuckSettings.defaultSnapcastPort
        guard let address = DuckSettings.Address.parse(address, defaultPort: port) else { return nil }
        switch kind {
        case "mpd": return .mpd(address, passwordFile: passwordFile)
        case "snapclient": return client.map { .snapclient(server: address, client: $0) }
        default: return nil
        }
    }

    /// Whether `state` is what jukeboxd set the player to (paused, or the lowered level; any
    /// level between it and the one before while a ramp was under way): anything else is
    /// someone's own change since, which is kept.
    func isOurs(_ state: DuckTargetState) -> Bool {
        if mode == DuckSettings.Mode.pause.rawValue { return !state.playing }
        guard let now = state.volume, let lowered else { return false }
        if ramping == true, let volume { return (min(volume, lowered)...max(volume, lowered)).contains(now) }
        return now == lowered
    }
}
