/// How often and when a clip has played, for `clips`.
public struct ClipStats: Sendable, Equatable, Codable {
    public var timesPlayed = 0
    /// Seconds since the Unix epoch.
    public var lastPlayed: Double?

    public init(timesPlayed: Int = 0, lastPlayed: Double? = nil) {
        self.timesPlayed = timesPlayed
        self.lastPlayed = lastPlayed
    }
}
