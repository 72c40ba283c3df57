import Foundation
import JukeboxTestSupport
import Testing

/// The page the daemon serves is `WebFiles.swift`, made from web/ by scripts/embed-web.py:
/// a change to web/ that was not embedded again would be served as it was before.
@Suite("The embedded page", .timeLimit(.minutes(1)))
struct WebFilesTests {
    @Test func webFilesIsWhatWebMakes() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let check = try await Tool.run("python3", [root + "/scripts/embed-web.py", "--check"])
        #expect(check.status == 0, "\(check.stderr)")
    }
}
