import Foundation
import JukeboxTestSupport
import Subprocess
import Testing

/// The phone page in a real browser: Debian's Chromium, driven by Selenium from
/// scripts/web-test.py, against the built daemon. The page is also served byte for byte as
/// the files in web/ hold it.
@Suite("Web remote page", .timeLimit(.minutes(3)))
struct WebPageTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let browserMissing: String? = {
        let fileManager = FileManager.default
        if !fileManager.isExecutableFile(atPath: "/usr/bin/chromium") { return "chromium is not installed (scripts/test.sh installs it): the page's flows are not tested" }
        if !fileManager.isExecutableFile(atPath: "/usr/bin/chromedriver") { return "chromium-driver is not installed (scripts/test.sh installs it)" }
        if !fileManager.fileExists(atPath: "/usr/lib/python3/dist-packages/selenium") { return "python3-selenium is not installed (scripts/test.sh installs it)" }
        return nil
    }()

    let web: WebDaemon
    var folder: TemporaryDirectory { web.folder }
    var tone: [UInt8] { web.tone }

    init() throws { web = try WebDaemon(fields: #""cue": "water.wav","#) }

    func withDaemon<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        try await web.run { base, _ in try await body(base) }
    }

    /// The daemon serves the files in web/ as they are, with no listing and no other files.
    @Test func thePageIsServedAsTheFilesInWebHoldIt() async throws {
        try await withDaemon { base in
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.repository + "/web").sorted()
            #expect(names == ["app.js", "icon.svg", "index.html", "manifest.webmanifest", "style.css"])
            var total = 0
            for name in names {
                let served = try await WebAPITests.curl(["\(base)/\(name == "index.html" ? "" : name)"])
                let file = try String(contentsOfFile: Self.repository + "/web/" + name, encoding: .utf8)
                #expect(served.status == 200, "\(name)")
                #expect(served.body == file, "\(name): run scripts/embed-web.py after changing web/")
                #expect(served.headers["content-security-policy"] == "default-src 'self'")
                total += file.utf8.count
            }
            #expect(total < 60_000, "the whole page is \(total) bytes")
            #expect(try await WebAPITests.curl(["\(base)/web/"]).status == 404, "no listing")
        }
    }

    @Test(.enabled(if: browserMissing == nil, Comment(rawValue: browserMissing ?? "")))
    func theFlowsWorkInChromium() async throws {
        // On the phone, outside the clips folder.
        let phone = try TemporaryDirectory()
        try phone.write("reminder.wav", tone)
        let screenshots = Self.repository + "/.build/web-screenshots"
        let outcome = try await withDaemon { [folder, phone] base in
            try await Subprocess.run(
                .path("/usr/bin/python3"),
                arguments: [Self.repository + "/scripts/web-test.py", "--base", base, "--password", "correct horse",
                            "--jukebox", DaemonProcess.binaryDirectory + "/jukebox", "--socket", folder.file("c.sock"),
                            "--wav", phone.file("reminder.wav"), "--state", folder.file("state.json"), "--screenshots", screenshots],
                output: .string(limit: 1 << 16), error: .string(limit: 1 << 16))
        }
        #expect(outcome.terminationStatus.isSuccess, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("all flows passed"))
    }
}
