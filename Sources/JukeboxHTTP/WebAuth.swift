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
/// constant time and never logged; an address that fails to log in 5 times in a minute is
/// refused for the rest of that minute.
///
/// The sessions are kept in a file beside the state file (mode 0600), so a phone stays logged
/// in when the daemon restarts. The file records a salted fingerprint of the password: after a
/// password change, every earlier session ends.
public actor WebAuth {
    public static let cookieName = "jukebox_session"
    public static let sessionLifetime: Duration = .seconds(30 * 24 * 3600)
    /// Failed logins an address may make in `throttleWindow`.
    public static let maxFailures = 5
    public static let throttleWindow: Duration = .seconds(60)
    /// Sessions kept at once; the oldest goes first. Each login makes one.
    public static let maxSessions = 1000
    /// Addresses whose failures are remembered at once.
    static let maxTrackedAddresses = 10_000

    private let password: [UInt8]?
    private let now: @Sendable () -> ContinuousClock.Instant
    /// Seconds since 1970: a session's expiry must mean the same after a restart.
    private let wallClock: @Sendable () -> Int64
    private let sessionsFile: String?
    private let io = BlockingWorkQueue(label: "jukeboxd.web-sessions")
    /// Session token → expiry (seconds since 1970).
    private var sessions: [String: Int64] = [:]
    private var failures: [String: [ContinuousClock.Instant]] = [:]
    private let logger: Logger

    public init(
        password: String?, sessionsFile: String? = nil, logger: Logger = Logger(label: "web", factory: { _ in SwiftLogNoOpLogHandler() }),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        wallClock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }
    ) {
        self.password = password.map { Array($0.utf8) }
        self.sessionsFile = password == nil ? nil : sessionsFile
        self.now = now
        self.wallClock = wallClock
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

    /// What the request proves, or nil.
    public func check(authorization: String?, cookie: String?) -> Credential? {
        guard let password else { return .open }
        if let authorization, authorization.hasPrefix("Bearer ") {
            return Self.equalInConstantTime(Array(authorization.dropFirst("Bearer ".count).utf8), password) ? .bearer : nil
        }
        if let token = cookie.flatMap(Self.sessionToken), let expiry = sessions[token] {
            if expiry > wallClock() { return .cookie }
            sessions.removeValue(forKey: token)
        }
        return nil
    }

    public enum Login: Sendable, Equatable {
        case accepted(token: String)
        case refused
        /// Too many failures from this address: try again after this many seconds.
        case throttled(retryAfter: Int)
    }

    public func login(password attempt: String, from address: String) async -> Login {
        let moment = now()
        var recent = (failures[address] ?? []).filter { moment - $0 < Self.throttleWindow }
        if recent.count >= Self.maxFailures, let oldest = recent.first {
            let wait = Self.throttleWindow - (moment - oldest)
            return .throttled(retryAfter: max(1, Int((wait.components.seconds)) + (wait.components.attoseconds > 0 ? 1 : 0)))
        }
        guard let password, Self.equalInConstantTime(Array(attempt.utf8), password) else {
            recent.append(moment)
            if failures.count >= Self.maxTrackedAddresses, failures[address] == nil {
                failures = failures.filter { $0.value.contains { moment - $0 < Self.throttleWindow } }
            }
            if failures.count < Self.maxTrackedAddresses || failures[address] != nil { failures[address] = recent }
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
        let header = first.split(separator: " ")
        guard header.count == 3, header[2] == Self.fingerprint(password, salt: String(header[1])) else {
            logger.info("the web remote's password changed: browsers log in again")
            return
        }
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
        var random = SystemRandomNumberGenerator()
        let salt = String(random.next() as UInt64, radix: 16)
        var text = "jukeboxd-web-sessions \(salt) \(Self.fingerprint(password, salt: salt))\n"
        for (token, expiry) in sessions.sorted(by: { $0.value < $1.value }) { text += "\(token) \(expiry)\n" }
        let bytes = Array(text.utf8)
        // A session that cannot be saved still works until the daemon stops.
        let failure = await io.run { () -> String? in
            do { try AtomicFile.write(bytes, to: sessionsFile, mode: 0o600) } catch { return "\(error)" }
            return nil
        }
        if let failure { logger.warning("cannot save the web remote's sessions: \(failure); browsers will log in again after a restart") }
    }

    /// The password's salted fingerprint. The file is as private as the password file itself
    /// (the daemon's user only); this only tells whether the password is still the same.
    static func fingerprint(_ password: [UInt8], salt: String) -> String {
        SessionDocument.revision(of: Array(salt.utf8) + [0] + password)
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
