/// What one Home Assistant (or a stranger on the network) may hold of the media player's
/// front end. Each is tested at, under and over.
public struct ESPHomeLimits: Sendable {
    /// Connections served at once; another is closed at once.
    public var maxClients = 4
    /// A connection must finish its handshake (or, in plaintext, say hello) within this.
    public var handshakeTimeout: Duration = .seconds(5)
    /// After this long without a byte from the client, it is pinged.
    public var pingAfter: Duration = .seconds(60)
    /// After this long without a byte, it is closed: always after a ping, with the time
    /// between the two to answer it.
    public var dropAfter: Duration = .seconds(90)
    /// Bytes written to a client that it has not read; over it, the connection is closed.
    public var maxUnsentBytes = 256 * 1024
    /// Announcements and media addresses one connection may have waiting to be fetched and
    /// queued; more are answered as failed.
    public var maxWaitingMedia = 4

    public init() {}
}
