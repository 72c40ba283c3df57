import JukeboxCore

/// Who may use the web remote and the HTTP API. With a password, a browser logs in and gets a
/// session cookie (30 days); scripts send `Authorization: Bearer PASSWORD`. Without one (only
/// allowed on a loopback address) everyone on this machine may. Passwords are compared in
/// constant time and never logged; an address that fails to log in 5 times in a minute is
/// refused for the rest of that minute.
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
    private var sessions: [String: ContinuousClock.Instant] = [:]
    private var failures: [String: [ContinuousClock.Instant]] = [:]

    public init(password: String?, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.password = password.map { Array($0.utf8) }
        self.now = now
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
            if expiry > now() { return .cookie }
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

    public func login(password attempt: String, from address: String) -> Login {
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
        if sessions.count >= Self.maxSessions, let oldest = sessions.min(by: { $0.value < $1.value })?.key {
            sessions.removeValue(forKey: oldest)
        }
        sessions[token] = moment + Self.sessionLifetime
        return .accepted(token: token)
    }

    public func logout(cookie: String?) {
        if let token = cookie.flatMap(Self.sessionToken) { sessions.removeValue(forKey: token) }
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
