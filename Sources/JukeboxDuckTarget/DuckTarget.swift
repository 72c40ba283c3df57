/// A player in the house that jukeboxd lowers while a clip sounds (MPD, a snapclient): read
/// its level, set it, pause it. Each call answers or throws within a second or so; the daemon's
/// are in JukeboxDuck, and the policy that drives them (`Ducker`) in JukeboxCore.
public protocol DuckTarget: Sendable {
    func read() async throws -> DuckTargetState
    func setVolume(_ percent: Int) async throws
    func setPaused(_ paused: Bool) async throws
    /// One step of a ramp: sets the level to `percent` unless the player is no longer at
    /// `expected` (someone set it since the last step), and returns the level it found. A
    /// player found elsewhere is left at the level found.
    func step(to percent: Int, expecting expected: Int) async throws -> Int?
    /// Runs `body` with the player reached over one connection, kept open for at most
    /// `length` and a second: a ramp's twenty steps a second, rather than a connection each.
    func withConnection<T: Sendable>(for length: Duration, _ body: @escaping @Sendable (any DuckTarget) async throws -> T) async throws -> T
    /// A ramp from `from`: each level of `levels` in turn, `every` apart (by `clock`). The first
    /// is set as it is; each after it, where it differs from the one before, as a `step`
    /// expecting that one. Returns nil once the last is set, or the level found where someone
    /// set another (left there); throws `CancellationError` when the task is cancelled.
    func ramp(from: Int, through levels: [Int], every: Duration, clock: any Clock<Duration>) async throws -> Int?
}

extension DuckTarget {
    /// A read, then the set if the level is still the one expected.
    public func step(to percent: Int, expecting expected: Int) async throws -> Int? {
        let found = try await read().volume
        if let found, !DuckTargetState.sameLevel(found, expected) { return found }
        try await setVolume(percent)
        return found
    }

    /// A step at a time, sleeping on `clock` between them.
    public func ramp(from: Int, through levels: [Int], every: Duration, clock: any Clock<Duration>) async throws -> Int? {
        var last = from
        for (index, level) in levels.enumerated() {
            try Task.checkCancellation()
            if level != last {
                if index == 0 {
                    try await setVolume(level)
                } else if let found = try await step(to: level, expecting: last), !DuckTargetState.sameLevel(found, last) {
                    return found
                }
                last = level
            }
            if index < levels.count - 1 { try await clock.sleep(for: every) }
        }
        return nil
    }

    /// Each call on its own: for players whose calls are cheap, or batched elsewhere.
    public func withConnection<T: Sendable>(for length: Duration, _ body: @escaping @Sendable (any DuckTarget) async throws -> T) async throws -> T {
        try await body(self)
    }
}

/// A player that jukeboxds sharing it coordinate through: each that has it lowered holds a
/// claim on the player itself, naming the level to go back to (MPD: a channel its connection
/// subscribes to, which MPD forgets when the connection goes, so a crash leaves no claim).
/// Two daemons on one Pi, each with its own card and room, may duck the same MPD.
///
/// A daemon whose clip ends and finds another's claim lets go of its own, waits until the
/// player has dropped it, and looks again: of two whose clips end together, the one that looks
/// last finds no claim but its own gone, and raises the music.
public protocol DuckClaims: Sendable {
    /// The levels to go back to that other jukeboxds (not `id`) claim now.
    func claims(except id: String) async throws -> [Int]
    /// The player's state and the others' claims, in one conversation.
    func readWithClaims(except id: String) async throws -> (state: DuckTargetState, claims: [Int])
    /// Claims the player for `id`, with the level to go back to, and calls `taken` once the
    /// player has it; returns once `letGo` has asked for it and the player has dropped the
    /// claim. Cancelling it (or the player going) ends it too.
    func holdClaim(level: Int, id: String, taken: @escaping @Sendable () -> Void) async throws
    /// Asks the `holdClaim` for `id` and `level` to let go.
    func letGo(level: Int, id: String) async throws
}

/// A player's volume (0–100; nil when it has none that can be set) and whether it is playing.
public struct DuckTargetState: Sendable, Equatable {
    public var volume: Int?
    public var playing: Bool
    public init(volume: Int?, playing: Bool) {
        self.volume = volume
        self.playing = playing
    }

    /// A mixer may read back a level a step from the one set (a hardware mixer's own steps):
    /// that is still the level set, and only a level further off is someone else's.
    public static func sameLevel(_ read: Int, _ set: Int) -> Bool { abs(read - set) <= 1 }
}

/// Where a player's control port is: a TCP host and port, or a Unix socket's path.
public enum PlayerAddress: Sendable, Hashable, CustomStringConvertible {
    case tcp(host: String, port: Int)
    case unix(path: String)

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): path
        }
    }
}
