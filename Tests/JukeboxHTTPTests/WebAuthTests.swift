import Foundation
import Logging
@testable import JukeboxHTTP
import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxTestSupport
import Synchronization
import Testing

/// Browser sessions outlive a restart of the daemon, end with a password change, a logout or
/// their 30 days, and the file that keeps them is the daemon user's alone.
@Suite("Web remote sessions")
struct WebAuthTests {
    let folder: TemporaryDirectory
    var file: String { folder.file("state.web-sessions") }
    /// Seconds since 1970, moved by the test.
    final class WallClock: Sendable {
        let seconds = Mutex<Int64>(1_800_000_000)
    }
    let wall = WallClock()

    init() throws { folder = try TemporaryDirectory() }

    func auth(_ password: String = "correct horse") async -> WebAuth {
        let auth = WebAuth(password: password, sessionsFile: file, time: TimeSource(wallClock: { [wall] in Double(wall.seconds.withLock { $0 }) }))
        await auth.restore()
        return auth
    }

    func cookie(_ token: String) -> String { "other=1; \(WebAuth.cookieName)=\(token)" }

    func logIn(_ auth: WebAuth) async throws -> String {
        guard case .accepted(let token) = await auth.login(password: "correct horse", from: "192.0.2.7") else {
            Issue.record("the right password is refused")
            throw CancellationError()
        }
        return token
    }

    @Test func aSessionOutlivesARestart() async throws {
        let token = try await logIn(await auth())
        #expect(await auth().check(authorization: nil, cookie: cookie(token), from: "192.0.2.7") == .allowed(.cookie))
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(!text.contains("correct horse"), "the password is not written")
    }

    @Test func aPasswordChangeEndsEverySession() async throws {
        let token = try await logIn(await auth())
        #expect(await auth("a new password").check(authorization: nil, cookie: cookie(token), from: "192.0.2.7") == .refused)
    }

    @Test func aSessionEndsAfter30DaysOrALogout() async throws {
        let first = try await logIn(await auth())
        let second = try await logIn(await auth())
        await auth().logout(cookie: cookie(second))
        let restarted = await auth()
        #expect(await restarted.check(authorization: nil, cookie: cookie(second), from: "192.0.2.7") == .refused, "logged out")
        #expect(await restarted.check(authorization: nil, cookie: cookie(first), from: "192.0.2.7") == .allowed(.cookie))
        wall.seconds.withLock { $0 += WebAuth.sessionLifetime.components.seconds + 1 }
        #expect(await restarted.check(authorization: nil, cookie: cookie(first), from: "192.0.2.7") == .refused, "expired")
        #expect(await auth().check(authorization: nil, cookie: cookie(first), from: "192.0.2.7") == .refused, "expired after a restart too")
    }

    @Test func aDamagedOrForeignFileGivesNoSessionAndIsReplaced() async throws {
        for text in ["", "garbage\n", "jukeboxd-web-sessions x\n", String(repeating: "x", count: WebAuth.maxSessionsFileSize + 1)] {
            try folder.write("state.web-sessions", text: text)
            #expect(await auth().check(authorization: nil, cookie: cookie("garbage"), from: "192.0.2.7") == .refused)
        }
        let token = try await logIn(await auth())
        #expect(await auth().check(authorization: nil, cookie: cookie(token), from: "192.0.2.7") == .allowed(.cookie))
    }

    /// The file used to hold a fast hash (FNV-1a) of the password; it holds PBKDF2's now.
    @Test func theFileHoldsASlowSaltedHashOfThePassword() async throws {
        _ = try await logIn(await auth())
        let header = try #require(try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").first).split(separator: " ")
        #expect(header.count == 4)
        #expect(header[1] == "pbkdf2-sha256:600000")
        #expect(header[2].count == 32 && header[3].count == 64, "a 16-byte salt and a 32-byte hash, in hex")
        let hash = try #require(PasswordHash(method: String(header[1]), salt: String(header[2]), hash: String(header[3])))
        let started = ContinuousClock.now
        #expect(hash.matches(Array("correct horse".utf8)))
        print("PBKDF2-SHA-256, \(PasswordHash.rounds) rounds: \(ContinuousClock.now - started) in this build")
        #expect(!hash.matches(Array("correct horsf".utf8)))
        // A file of an older jukeboxd (salt and FNV fingerprint), or one asking for rounds out
        // of bounds, gives no session.
        let token = try await logIn(await auth())
        for first in ["jukeboxd-web-sessions 1f2e3d 0123456789abcdef", "jukeboxd-web-sessions pbkdf2-sha256:1 \(header[2]) \(header[3])",
                      "jukeboxd-web-sessions pbkdf2-sha256:99999999999 \(header[2]) \(header[3])"] {
            try folder.write("state.web-sessions", text: "\(first)\n\(token) 1900000000\n")
            #expect(await auth().check(authorization: nil, cookie: cookie(token), from: "192.0.2.7") == .refused, "\(first)")
        }
    }

    /// Every way of giving the password counts against one limit per address.
    @Test func bearerAndLoginFailuresShareOneLimit() async throws {
        let auth = WebAuth(password: "correct horse")
        for _ in 0..<3 { #expect(await auth.check(authorization: "Bearer guess", cookie: nil, from: "192.0.2.9") == .refused) }
        for _ in 0..<2 { #expect(await auth.login(password: "guess", from: "192.0.2.9") == .refused) }
        guard case .throttled = await auth.check(authorization: "bearer correct horse", cookie: nil, from: "192.0.2.9") else {
            Issue.record("a throttled address got in with a Bearer header")
            return
        }
        guard case .throttled = await auth.login(password: "correct horse", from: "192.0.2.9") else {
            Issue.record("a throttled address logged in")
            return
        }
        #expect(await auth.check(authorization: "BEARER correct horse", cookie: nil, from: "192.0.2.10") == .allowed(.bearer), "another address")
        #expect(await auth.check(authorization: "Basic Y29ycmVjdA==", cookie: nil, from: "192.0.2.10") == .refused)
    }

    /// One failed login from each of 10 000 addresses used to fill the table and switch
    /// throttling off, with a log line for each. Once the table is full, newcomers share one
    /// budget, and the log stays a few lines.
    @Test func aFullTableThrottlesNewcomersTogetherAndTheLogStaysShort() async throws {
        let log = LogCollector()
        let clock = ManualClock()
        let auth = WebAuth(password: "correct horse", logger: Logger(label: "web") { _ in log }, time: TimeSource(clock: clock))
        for index in 0..<WebAuth.maxTrackedAddresses {
            #expect(await auth.login(password: "guess", from: "10.\(index >> 16).\((index >> 8) & 255).\(index & 255)") == .refused)
        }
        // Under the limit: four fresh addresses fail once each; the fifth failure throttles them all.
        for index in 0..<WebAuth.maxFailures {
            #expect(await auth.login(password: "guess", from: "172.16.0.\(index)") == .refused)
        }
        guard case .throttled = await auth.login(password: "correct horse", from: "172.16.1.1") else {
            Issue.record("a fresh address was not throttled once the table was full")
            return
        }
        #expect(log.lines.count <= WebAuth.maxFailureLines, "\(log.lines.count) lines")
        // A minute later the count of what was not logged comes with the next line.
        clock.advance(by: WebAuth.throttleWindow)
        _ = await auth.login(password: "guess", from: "192.0.2.1")
        #expect(log.lines.contains { $0.contains("\(WebAuth.maxTrackedAddresses + WebAuth.maxFailures - WebAuth.maxFailureLines) more wrong passwords for the web remote were not logged") }, "\(log.lines)")
        // The old failures have expired: the table makes room, and the right password works.
        #expect(await auth.login(password: "correct horse", from: "172.16.1.1") != .refused)
    }

    @Test func withoutAPasswordNothingIsWritten() async throws {
        let open = WebAuth(password: nil, sessionsFile: file)
        await open.restore()
        #expect(await open.check(authorization: nil, cookie: nil, from: "192.0.2.7") == .allowed(.open))
        #expect(!FileManager.default.fileExists(atPath: file))
    }
}
