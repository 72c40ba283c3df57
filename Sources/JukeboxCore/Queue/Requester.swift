/// Who asked for an entry: the front end it came through, and the name it goes by. What an
/// entry's origin means (the siren is on while the siren's clip plays, `stop` ends what one
/// asker queued, MQTT's `source`) is decided by the front end, which no request can name; the
/// name is only shown.
public struct Requester: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// The ways in.
    public enum FrontEnd: String, Sendable, CaseIterable {
        /// The control socket: `jukebox`, a script, cron.
        case socket
        /// The web remote.
        case web
        /// An MQTT command.
        case mqtt
        /// Home Assistant's siren entity, over MQTT.
        case siren
        /// The sound test's tone, through the queue.
        case soundTest = "test"
        /// Home Assistant's media player, over ESPHome's native API.
        case esphome
    }

    public var frontEnd: FrontEnd
    /// The socket's user (or the `client` a request gave); the front end's own word otherwise,
    /// unless the request gave a `client` name.
    public var name: String

    public init(_ frontEnd: FrontEnd, name: String) {
        self.frontEnd = frontEnd
        self.name = name
    }

    /// A client of the control socket by that name.
    public init(stringLiteral name: String) { self.init(.socket, name: name) }

    /// As the history and `queue` show it: the name.
    public var description: String { name }

    /// An entry's asker as the state file keeps it: the front end `via` names; for one saved
    /// without it (by an earlier version), the front ends' own words name them, as those
    /// versions did, and any other name is a socket's client.
    public static func saved(name: String, via: String?) -> Requester {
        Requester(via.flatMap(FrontEnd.init(rawValue:)) ?? FrontEnd(rawValue: name) ?? .socket, name: name)
    }
}
