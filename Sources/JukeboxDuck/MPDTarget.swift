import JukeboxDuckTarget
import JukeboxFiles

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

    /// A ramp's steps over one connection, open for `length` and the usual second more.
    public func withConnection<T: Sendable>(for length: Duration, _ body: @escaping @Sendable (any DuckTarget) async throws -> T) async throws -> T {
        let password = try await readPassword()
        return try await LineExchange.run(address, timeout: length + LineExchange.timeout) { lines in
            try await Self.greet(lines, password: password)
            return try await body(Held(lines: lines))
        }
    }

    func readPassword() async throws -> String? {
        guard let passwordFile else { return nil }
        return try await Self.files.run { try Self.password(passwordFile) }
    }

    /// MPD's greeting, then the password if it has one.
    static func greet(_ lines: LineExchange.Lines, password: String?) async throws {
        let greeting = try await lines.nextText()
        guard greeting.hasPrefix("OK MPD ") else { throw PlayerProblem("is not MPD (it greeted with \"\(greeting.prefix(40))\")") }
        if let password {
            try await lines.send("password \"\(quoted(password))\"")
            _ = try await answer(lines, to: "password")
        }
    }

    /// One command on a connection MPD has greeted on, and its answer's lines.
    static func exchange(_ lines: LineExchange.Lines, _ line: String) async throws -> [String] {
        try await lines.send(line)
        return try await answer(lines, to: String(line.prefix { $0 != " " }))
    }

    /// MPD on a connection held open: its calls are commands on it, one after another.
    struct Held: DuckTarget {
        let lines: LineExchange.Lines

        func read() async throws -> DuckTargetState { try MPDTarget.state(try await MPDTarget.exchange(lines, "status")) }
        func setVolume(_ percent: Int) async throws { _ = try await MPDTarget.exchange(lines, "setvol \(min(max(percent, 0), 100))") }
        func setPaused(_ paused: Bool) async throws { _ = try await MPDTarget.exchange(lines, "pause \(paused ? 1 : 0)") }

        /// `status` and `setvol` in one command list, one round trip. A level found elsewhere
        /// was set since the last step: it is set back at once, before MPD's next chunk.
        func step(to percent: Int, expecting expected: Int) async throws -> Int? {
            try await lines.send("command_list_begin\nstatus\nsetvol \(min(max(percent, 0), 100))\ncommand_list_end")
            let found = try MPDTarget.state(try await MPDTarget.answer(lines, to: "status")).volume
            if let found, !DuckTargetState.sameLevel(found, expected) {
                _ = try await MPDTarget.exchange(lines, "setvol \(found)")
            }
            return found
        }
    }

    /// The lines before `OK`; an `ACK` is MPD's refusal, in its words.
    static func answer(_ lines: LineExchange.Lines, to command: String) async throws -> [String] {
        var answer: [String] = []
        while true {
            let line = try await lines.nextText()
            if line == "OK" { return answer }
            if line.hasPrefix("ACK ") {
                let message = line.split(separator: "}", maxSplits: 1).last.map { $0.trimmingPrefix(" ") } ?? ""
                throw PlayerProblem("refused \(command): \(message.prefix(200))")
            }
            guard answer.count < 200 else { throw PlayerProblem("answered \(command) with more than 200 lines") }
            answer.append(line)
        }
    }

    private static func quoted(_ text: String) -> String {
        text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
    }

    /// Reads password files off the cooperative pool.
    private static let files = BlockingWorkQueue(label: "jukebox.duck.files")

    /// The password: the file's first line.
    private static func password(_ path: String) throws -> String {
        do {
            let bytes = try FilePath.read(path, limit: 1024)
            let text = String(decoding: bytes, as: UTF8.self)
            return String(text.prefix { $0 != "\n" && $0 != "\r" })
        } catch {
            throw PlayerProblem("its password file \(path) could not be read (\(error))")
        }
    }
}

/// Claims on MPD, for jukeboxds that duck the same one: a claim is a channel,
/// `jukeboxd.duck.LEVEL.ID`, that a connection of the claiming daemon subscribes to and holds
/// open, waiting in `idle` (where MPD's connection timeout does not apply). `channels` lists
/// the channels someone is subscribed to; MPD drops a channel with its last subscriber, so a
/// daemon that crashes leaves no claim behind. `letGo` sends the channel a message; the
/// holder wakes, unsubscribes, and returns once MPD has said OK: the claim is gone by then.
extension MPDTarget: DuckClaims {
    static let claimPrefix = "jukeboxd.duck."
    static let letGoMessage = "let-go"

    static func channel(level: Int, id: String) -> String { "\(claimPrefix)\(min(max(level, 0), 100)).\(id)" }

    public func claims(except id: String) async throws -> [Int] {
        try await withConnection(for: .zero) { target in
            guard let held = target as? Held else { return [] }
            return try await Self.claims(on: held, except: id)
        }
    }

    public func readWithClaims(except id: String) async throws -> (state: DuckTargetState, claims: [Int]) {
        try await withConnection(for: .zero) { target in
            guard let held = target as? Held else { return (try await target.read(), []) }
            return (try await held.read(), try await Self.claims(on: held, except: id))
        }
    }

    /// The claims' levels in `channels`, but `id`'s.
    static func claims(on held: Held, except id: String) async throws -> [Int] {
        try await MPDTarget.exchange(held.lines, "channels").compactMap { line -> Int? in
            guard line.hasPrefix("channel: " + Self.claimPrefix) else { return nil }
            let rest = line.dropFirst(("channel: " + Self.claimPrefix).count)
            let parts = rest.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, parts[1] != id, let level = Int(parts[0]), (0...100).contains(level) else { return nil }
            return level
        }
    }

    public func holdClaim(level: Int, id: String, taken: @escaping @Sendable () -> Void) async throws {
        let password = try await readPassword()
        let channel = Self.channel(level: level, id: id)
        // Held until let go or cancelled: the exchange's own limit is a year.
        try await LineExchange.run(address, timeout: .seconds(365 * 86_400)) { lines in
            try await Self.greet(lines, password: password)
            _ = try await Self.exchange(lines, "subscribe \(channel)")
            taken()
            while true {
                try await lines.send("idle message")
                while try await lines.nextText() != "OK" {}
                // Only this daemon's `letGo` ends the claim; any other message is let go by.
                let messages = try await Self.exchange(lines, "readmessages")
                if messages.contains("message: \(Self.letGoMessage)") {
                    _ = try await Self.exchange(lines, "unsubscribe \(channel)")
                    return
                }
            }
        }
    }

    public func letGo(level: Int, id: String) async throws {
        try await withConnection(for: .zero) { target in
            guard let held = target as? Held else { return }
            _ = try await MPDTarget.exchange(held.lines, "sendmessage \(Self.channel(level: level, id: id)) \(Self.letGoMessage)")
        }
    }
}
