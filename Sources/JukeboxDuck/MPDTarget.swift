import Glibc
import JukeboxDuckTarget
import JukeboxFiles
import Synchronization

/// MPD, lowered through its own text protocol (https://mpd.readthedocs.io/en/latest/protocol.html):
/// `status` for its volume and state, `setvol` and `pause`. A connection per call, or one for a
/// whole ramp (`withConnection`): MPD greets with `OK MPD …`, each command ends in `OK` or
/// `ACK [error@n] {command} message`.
public struct MPDTarget: DuckTarget {
    let address: PlayerAddress
    let passwordFile: String?

    public init(address: PlayerAddress, passwordFile: String?) {
        self.address = address
        self.passwordFile = passwordFile
    }

    // A call on its own is a connection held for no longer than the one call.
    public func read() async throws -> DuckTargetState {
        try await withConnection(for: .zero) { try await $0.read() }
    }

    public func setVolume(_ percent: Int) async throws {
        try await withConnection(for: .zero) { try await $0.setVolume(percent) }
    }

    public func setPaused(_ paused: Bool) async throws {
        try await withConnection(for: .zero) { try await $0.setPaused(paused) }
    }

    public func step(to percent: Int, expecting expected: Int) async throws -> Int? {
        try await withConnection(for: .zero) { try await $0.step(to: percent, expecting: expected) }
    }

    /// The volume and whether it plays, from `status`'s lines.
    static func state(_ lines: [String]) throws -> DuckTargetState {
        var volume: Int?
        var playing = false
        for line in lines {
            if line.hasPrefix("volume: ") {
                guard let value = Int(line.dropFirst("volume: ".count)) else { throw PlayerProblem("gave a volume that is not a number") }
                // -1: MPD has no mixer for its output.
                volume = (0...100).contains(value) ? value : nil
            } else if line.hasPrefix("state: ") {
                playing = line.dropFirst("state: ".count) == "play"
            }
        }
        return DuckTargetState(volume: volume, playing: playing)
    }

    /// The conversations of `body` over the one connection to this MPD (`MPDLink`), kept out
    /// of MPD's `idle` between them; within `length` and a second.
    public func withConnection<T: Sendable>(for length: Duration, _ body: @escaping @Sendable (any DuckTarget) async throws -> T) async throws -> T {
        let held = Held(link: link)
        guard length > .zero else { return try await body(held) }
        return try await link.hold(for: length) { try await body(held) }
    }

    var link: MPDLink { MPDLink.link(MPDLink.Key(address: address, passwordFile: passwordFile)) }

    /// A conversation's calls, each an exchange over the link's connection.
    struct Held: DuckTarget {
        let link: MPDLink

        func read() async throws -> DuckTargetState { try MPDTarget.state(try await link.exchange { try $0.exchange("status") }) }
        func setVolume(_ percent: Int) async throws { _ = try await link.exchange { try $0.exchange("setvol \(min(max(percent, 0), 100))") } }
        func setPaused(_ paused: Bool) async throws { _ = try await link.exchange { try $0.exchange("pause \(paused ? 1 : 0)") } }

        func step(to percent: Int, expecting expected: Int) async throws -> Int? {
            try await link.exchange { try Self.step($0, to: percent, expecting: expected) }
        }

        /// The level read and the next set in one command list; a level found elsewhere is
        /// set back to what was found.
        static func step(_ connection: MPDLink.Connection, to percent: Int, expecting expected: Int) throws -> Int? {
            let found = try MPDTarget.state(try connection.list(["status", "setvol \(min(max(percent, 0), 100))"])).volume
            if let found, !DuckTargetState.sameLevel(found, expected) {
                _ = try connection.exchange("setvol \(found)")
            }
            return found
        }

        /// The whole ramp as one conversation on the link's queue, sleeping there between
        /// steps: a step costs its exchange and one wake-up, not a hand-off to the queue and
        /// back each time. It keeps the real time, as MPD does; a cancelled task ends it at
        /// the next step.
        func ramp(from: Int, through levels: [Int], every: Duration, clock: any Clock<Duration>) async throws -> Int? {
            let cancelled = CancelFlag()
            return try await withTaskCancellationHandler {
                try await link.exchange { connection -> Int? in
                    var last = from
                    for (index, level) in levels.enumerated() {
                        if cancelled.isSet { throw CancellationError() }
                        if level != last {
                            if index == 0 {
                                _ = try connection.exchange("setvol \(min(max(level, 0), 100))")
                            } else if let found = try Self.step(connection, to: level, expecting: last), !DuckTargetState.sameLevel(found, last) {
                                return found
                            }
                            last = level
                        }
                        if index < levels.count - 1 { usleep(UInt32(clamping: MPDLink.milliseconds(every) * 1000)) }
                    }
                    return nil
                }
            } onCancel: {
                cancelled.set()
            }
        }
    }
}

extension MPDTarget: DuckClaims {
    static let claimPrefix = "jukeboxd.duck."

    static func channel(level: Int, id: String) -> String { "\(claimPrefix)\(min(max(level, 0), 100)).\(id)" }

    public func claims(except id: String) async throws -> [Int] {
        try await link.exchange { try Self.claims(on: $0, except: id) }
    }

    public func readWithClaims(except id: String) async throws -> (state: DuckTargetState, claims: [Int]) {
        try await link.exchange { connection in
            (try Self.state(try connection.exchange("status")), try Self.claims(on: connection, except: id))
        }
    }

    static func claims(on connection: MPDLink.Connection, except id: String) throws -> [Int] {
        try connection.exchange("channels").compactMap { line -> Int? in
            guard line.hasPrefix("channel: " + Self.claimPrefix) else { return nil }
            let rest = line.dropFirst(("channel: " + Self.claimPrefix).count)
            let parts = rest.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, parts[1] != id, let level = Int(parts[0]), (0...100).contains(level) else { return nil }
            return level
        }
    }

    /// A channel on MPD that names the level to go back to, subscribed on the link's
    /// connection until `letGo`: gone from MPD as soon as it is let go, or the daemon is.
    public func holdClaim(level: Int, id: String, taken: @escaping @Sendable () -> Void) async throws {
        try await link.holdClaim(Self.channel(level: level, id: id), taken: taken)
    }

    public func letGo(level: Int, id: String) async throws {
        try await link.letGo(Self.channel(level: level, id: id))
    }
}

/// Set once a task is cancelled, for work that runs off the task (on a queue of its own).
final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}
