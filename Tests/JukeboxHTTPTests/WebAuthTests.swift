import Foundation
@testable import JukeboxHTTP
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
        let auth = WebAuth(password: password, sessionsFile: file, wallClock: { [wall] in wall.seconds.withLock { $0 } })
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
        #expect(await auth().check(authorization: nil, cookie: cookie(token)) == .cookie)
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(!text.contains("correct horse"), "the password is not written")
    }

    @Test func aPasswordChangeEndsEverySession() async throws {
        let token = try await logIn(await auth())
        #expect(await auth("a new password").check(authorization: nil, cookie: cookie(token)) == nil)
    }

    @Test func aSessionEndsAfter30DaysOrALogout() async throws {
        let first = try await logIn(await auth())
        let second = try await logIn(await auth())
        await auth().logout(cookie: cookie(second))
        let restarted = await auth()
        #expect(await restarted.check(authorization: nil, cookie: cookie(second)) == nil, "logged out")
        #expect(await restarted.check(authorization: nil, cookie: cookie(first)) == .cookie)
        wall.seconds.withLock { $0 += WebAuth.sessionLifetime.components.seconds + 1 }
        #expect(await restarted.check(authorization: nil, cookie: cookie(first)) == nil, "expired")
        #expect(await auth().check(authorization: nil, cookie: cookie(first)) == nil, "expired after a restart too")
    }

    @Test func aDamagedOrForeignFileGivesNoSessionAndIsReplaced() async throws {
        for text in ["", "garbage\n", "jukeboxd-web-sessions x\n", String(repeating: "x", count: WebAuth.maxSessionsFileSize + 1)] {
            try folder.write("state.web-sessions", text: text)
            #expect(await auth().check(authorization: nil, cookie: cookie("garbage")) == nil)
        }
        let token = try await logIn(await auth())
        #expect(await auth().check(authorization: nil, cookie: cookie(token)) == .cookie)
    }

    @Test func withoutAPasswordNothingIsWritten() async throws {
        let open = WebAuth(password: nil, sessionsFile: file)
        await open.restore()
        #expect(await open.check(authorization: nil, cookie: nil) == .open)
        #expect(!FileManager.default.fileExists(atPath: file))
    }
}
