extension ClipPlayQueue {
    /// Which entry has been started how many times in a row without finishing: saved with the
    /// state, so a clip that takes the daemon down cannot make it crash-loop (`restore`).
    public struct StartMark: Codable, Sendable, Equatable {
        public var ticket: UInt64
        public var count: Int
        public init(ticket: UInt64, count: Int) {
            self.ticket = ticket
            self.count = count
        }
    }
}
