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

    /// For an entry saved without its front end (by an earlier version): the front ends'
    /// own words name them, as those versions did; any other name is a socket's client.
    public static func saved(name: String, via: String?) -> Requester {
        if let via, let frontEnd = FrontEnd(rawValue: via) { return Requester(frontEnd, name: name) }
        let named: FrontEnd = switch name {
        case "web": .web
        case "mqtt": .mqtt
        case "siren": .siren
        case "test": .soundTest
        default: .socket
        }
        return Requester(named, name: name)
    }
}
