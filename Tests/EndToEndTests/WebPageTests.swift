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

    let folder: TemporaryDirectory
    let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 4000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("water.wav", tone)
        try folder.write("walk.wav", tone)
        try folder.write("password", text: "correct horse\n")
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" }, "http": { "listen": "127.0.0.1:0", "passwordFile": "password" }, "cue": "water.wav",
              "clips": [ { "file": "water.wav" }, { "file": "walk.wav" } ] }
            """)
    }

    var arguments: [String] { [folder.file("s.json"), "--socket", folder.file("c.sock"), "--state", folder.file("state.json"), "--device", "null"] }

    func withDaemon<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        try await DaemonProcess.withDaemon(arguments, ready: "web remote listening on") { log in
            let line = await log.lines.first { $0.contains("web remote listening on") } ?? ""
            let port = line.split(separator: "(port ").last.map { String($0.dropLast()) } ?? ""
            return try await body("http://127.0.0.1:\(port)")
        }.result
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
