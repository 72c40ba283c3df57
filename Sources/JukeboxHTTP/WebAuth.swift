#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JukeboxCore
import Logging

/// Who may use the web remote and the HTTP API. With a password, a browser logs in and gets a
/// session cookie (30 days); scripts send `Authorization: Bearer PASSWORD`. Without one (only
/// allowed on a loopback address) everyone on this machine may. Passwords are compared in
/// constant time and never logged.
///
/// Every way of presenting the password (a login, a Bearer header) counts against one limit:
/// an address that gets it wrong 5 times in a minute is refused for the rest of that minute,
/// even with the right one. The table of addresses is bounded; once it is full, every address
/// not in it shares one budget, so filling it throttles newcomers rather than nobody. Failures
/// are logged a few lines a minute at most, with a count of the rest.
///
/// The sessions are kept in a file beside the state file (mode 0600), so a phone stays logged
/// in when the daemon restarts. The file records a slow salted hash of the password (PBKDF2
/// with SHA-256): after a password change, every earlier session ends, and a copy of the file
/// is slow to guess the password from.
public actor WebAuth {
    public static let cookieName = "jukebox_session"
    public static let sessionLifetime: Duration = .seconds(30 * 24 * 3600)
    /// Failed passwords an address may give in `throttleWindow`.
    public static let maxFailures = 5
    public static let throttleWindow: Duration = .seconds(60)
    /// Sessions kept at once; the oldest goes first. Each login makes one.
    public static let maxSessions = 1000
    /// Addresses whose failures are remembered one by one; past this they share `overflow`.
    static let maxTrackedAddresses = 10_000
    /// The one entry of every address the full table has no room for.
    static let overflow = "every other address"
    /// Log lines about failed passwords in one `throttleWindow`; the rest are counted.
    static let maxFailureLines = 5

    private let password: [UInt8]?
    private let now: @Sendable () -> ContinuousClock.Instant
    /// Seconds since 1970: a session's expiry must mean the same after a restart.
    private let wallClock: @Sendable () -> Int64
    private let sessionsFile: String?
    private let io = BlockingWorkQueue(label: "jukeboxd.web-sessions")
    /// The salt and hash written to the sessions file, once made or read.
    private var passwordHash: PasswordHash?
    /// Session token → expiry (seconds since 1970).
    private var sessions: [String: Int64] = [:]
    private var failures: [String: [ContinuousClock.Instant]] = [:]
    private var failureLog = LogBudget(what: "wrong passwords for the web remote", maxLines: WebAuth.maxFailureLines, window: WebAuth.throttleWindow)
    private let logger: Logger

    /// `time`: the daemon's clocks (tests drive theirs): the one that measures times the
    /// throttling, the wall clock the sessions' expiry.
    public init(
        password: String?, sessionsFile: String? = nil, logger: Logger = Logger(label: "web", factory: { _ in SwiftLogNoOpLogHandler() }),
        time: TimeSource = .system
    ) {
        self.password = password.map { Array($0.utf8) }
        self.sessionsFile = password == nil ? nil : sessionsFile
        // Failures are compared with each other only: the measuring clock's time since now,
        // counted on from this moment.
        let (origin, elapsed) = (ContinuousClock.now, ElapsedClock(time.clock))
        now = { origin + elapsed.now }
        wallClock = { time.wallSeconds() }
        self.logger = logger
    }

    public nonisolated var isOpen: Bool { password == nil }

    public enum Credential: Sendable, Equatable {
        /// No password is set: anyone who can connect.
        case open
        case bearer
        /// A browser's session cookie: state-changing requests must also pass the Origin check.
        case cookie
    }

    public enum Verdict: Sendable, Equatable {
        case allowed(Credential)
        /// No credential, or a wrong one.
        case refused
        /// Too many wrong passwords from this address: try again after this many seconds.
        case throttled(retryAfter: Int)
    }

    /// What the request proves, from `address`. A wrong Bearer password counts as a failed
    /// login, and a throttled address is refused whatever it sends.
    public func check(authorization: String?, cookie: String?, from address: String) -> Verdict {
        guard let password else { return .allowed(.open) }
        if let authorization, let presented = Self.bearerToken(authorization) {
            if let wait = throttled(address) { return .throttled(retryAfter: wait) }
            guard Self.equalInConstantTime(Array(presented.utf8), password) else {
                failed(address, way: "a Bearer header")
                return .refused
            }
            failures.removeValue(forKey: address)
            return .allowed(.bearer)
        }
        if let token = cookie.flatMap(Self.sessionToken), let expiry = sessions[token] {
            if expiry > wallClock() { return .allowed(.cookie) }
            sessions.removeValue(forKey: token)
        }
        return .refused
    }

    /// The password of an `Authorization: Bearer …` header; the scheme's name is read in any
    /// case (RFC 9110, 11.1). nil for any other scheme.
    static func bearerToken(_ header: String) -> String? {
        let trimmed = header.drop { $0 == " " }
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "bearer" else { return nil }
        return String(trimmed[space...].drop { $0 == " " })
    }

    public enum Login: Sendable, Equatable {
        case accepted(token: String)
        case refused
        /// Too many failures from this address: try again after this many seconds.
        case throttled(retryAfter: Int)
    }

    public func login(password attempt: String, from address: String) async -> Login {
        if let wait = throttled(address) { return .throttled(retryAfter: wait) }
        guard let password, Self.equalInConstantTime(Array(attempt.utf8), password) else {
            failed(address, way: "the login form")
            return .refused
        }
        failures.removeValue(forKey: address)
        var random = SystemRandomNumberGenerator()
        let token = (0..<4).map { _ in String(random.next() as UInt64, radix: 16) }.joined(separator: "-")
        let wall = wallClock()
        sessions = sessions.filter { $0.value > wall }
        if sessions.count >= Self.maxSessions, let oldest = sessions.min(by: { $0.value < $1.value })?.key {
            sessions.removeValue(forKey: oldest)
        }
        sessions[token] = wall + Self.sessionLifetime.components.seconds
        await save()
        return .accepted(token: token)
    }

    public func logout(cookie: String?) async {
        if let token = cookie.flatMap(Self.sessionToken), sessions.removeValue(forKey: token) != nil { await save() }
    }

    // MARK: - Throttling

    /// The entry of `address` in the failure table: its own, or the shared one once the table
    /// is full.
    private func key(_ address: String, at moment: ContinuousClock.Instant) -> String {
        if failures[address] != nil || failures.count < Self.maxTrackedAddresses { return address }
        // Expired entries make room; the full table is swept at most once a second, not on
        // every request from a newcomer while it stays full.
        if lastSweep.map({ moment - $0 >= .seconds(1) }) ?? true {
            lastSweep = moment
            failures = failures.filter { $0.value.contains { moment - $0 < Self.throttleWindow } }
        }
        return failures.count < Self.maxTrackedAddresses ? address : Self.overflow
    }

    /// When the full failure table was last swept for expired entries.
    private var lastSweep: ContinuousClock.Instant?

    /// Seconds until `address` may try again, or nil when it may now.
    private func throttled(_ address: String) -> Int? {
        let moment = now()
        let recent = (failures[key(address, at: moment)] ?? []).filter { moment - $0 < Self.throttleWindow }
        guard recent.count >= Self.maxFailures, let oldest = recent.first else { return nil }
        let wait = Self.throttleWindow - (moment - oldest)
        return max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
    }

    private func failed(_ address: String, way: String) {
        let moment = now()
        let key = key(address, at: moment)
        var recent = (failures[key] ?? []).filter { moment - $0 < Self.throttleWindow }
        recent.append(moment)
        failures[key] = recent
        let who = key == Self.overflow ? "\(address) (counted with every other address: the table of addresses is full)" : address
        let line = recent.count == Self.maxFailures
            ? "\(Self.maxFailures) wrong passwords for the web remote within \(Self.throttleWindow.components.seconds) s from \(who), the last through \(way); it is refused for the rest of that time"
            : "a wrong password for the web remote from \(who), through \(way)"
        for line in failureLog.admit(line, at: moment) { logger.notice("\(line)", metadata: ["client": "\(address)"]) }
    }

    // MARK: - The sessions file

    /// Takes up the sessions saved by an earlier run, when their password is still the one in
    /// use. A file that is missing, unreadable or from another password gives none.
    public func restore() async {
        guard let sessionsFile, let password else { return }
        let read = await io.run { Result { () throws(FileReadError) in try FilePath.read(sessionsFile, limit: Self.maxSessionsFileSize) } }
        let bytes: [UInt8]
        switch read {
        case .success(let read): bytes = read
        case .failure(let error):
            if !error.isMissing { logger.warning("cannot read the web remote's sessions \(sessionsFile): \(error); browsers log in again") }
            return
        }
        var lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard let first = lines.first, first.hasPrefix("jukeboxd-web-sessions ") else {
            logger.warning("the web remote's sessions file \(sessionsFile) is not one this daemon wrote; browsers log in again")
            return
        }
        // jukeboxd-web-sessions pbkdf2-sha256:ROUNDS SALT HASH
        let header = first.split(separator: " ").map(String.init)
        guard header.count == 4, let saved = PasswordHash(method: header[1], salt: header[2], hash: header[3]) else {
            logger.info("the web remote's sessions file \(sessionsFile) is from an older jukeboxd: browsers log in again")
            return
        }
        let same = await io.run { saved.matches(password) }
        guard same else {
            logger.info("the web remote's password changed: browsers log in again")
            return
        }
        passwordHash = saved
        lines.removeFirst()
        let wall = wallClock()
        for line in lines.prefix(Self.maxSessions) {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let expiry = Int64(fields[1]), expiry > wall, expiry <= wall + Self.sessionLifetime.components.seconds else { continue }
            sessions[String(fields[0])] = expiry
        }
    }

    static let maxSessionsFileSize = 256 * 1024

    private func save() async {
        guard let sessionsFile, let password else { return }
        if passwordHash == nil {
            // Made once, on the blocking thread: it is slow on purpose.
            passwordHash = await io.run { PasswordHash(password: password, rounds: PasswordHash.rounds) }
        }
        guard let passwordHash else { return }
        var text = "jukeboxd-web-sessions \(passwordHash.method) \(passwordHash.salt) \(passwordHash.hash)\n"
        for (token, expiry) in sessions.sorted(by: { $0.value < $1.value }) { text += "\(token) \(expiry)\n" }
        let bytes = Array(text.utf8)
        // A session that cannot be saved still works until the daemon stops.
        let failure = await io.run { () -> String? in
            do { try AtomicFile.write(bytes, to: sessionsFile, mode: 0o600) } catch { return "\(error)" }
            return nil
        }
        if let failure { logger.warning("cannot save the web remote's sessions: \(failure); browsers will log in again after a restart") }
    }

    /// The session token in a `Cookie` header.
    static func sessionToken(_ header: String) -> String? {
        for part in header.split(separator: ";") {
            let pair = part.drop { $0 == " " }
            if pair.hasPrefix(cookieName + "=") { return String(pair.dropFirst(cookieName.count + 1)) }
        }
        return nil
    }

    /// Compares every byte whatever the first difference, so the time taken tells nothing
    /// about how much of a guess was right.
    static func equalInConstantTime(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = a.count ^ b.count
        for index in 0..<max(a.count, b.count) {
            difference |= Int((index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0))
        }
        return difference == 0
    }
}
