import Foundation
import JukeboxTestSupport
import Subprocess
import Testing

/// The phone page in a real browser: Debian's Chromium, driven by Selenium from
/// scripts/web-test.py, against the built daemon, over HTTPS with the daemon's own certificate
/// authority trusted as a user trusts it. The page is also served byte for byte as the files in
/// web/ hold it.
@Suite("Web remote page", .serialized, .timeLimit(.minutes(3)))
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

    /// With a music bed (nothing writes into it), for the page's Music button, day plans
    /// without times, for its Today card, and an alert, for its Alerts control.
    init() throws {
        web = try WebDaemon(
            fields: #""cue": "water.wav", "bed": { "pipe": "bed.fifo" }, "plans": { "regular": [], "exam": [] }, "days": [ { "plan": "regular" } ], "alerts": { "lockdown": { "clip": "water", "every": "1h" } },"#,
            scheme: .https)
    }

    func withDaemon<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        try await web.run { base, _ in try await body(base) }
    }

    /// The daemon serves the files in web/ as they are, with no listing and no other files.
    @Test func thePageIsServedAsTheFilesInWebHoldIt() async throws {
        try await withDaemon { base in
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.repository + "/web").sorted()
            #expect(names == ["app.js", "icon.svg", "index.html", "manifest.webmanifest", "style.css", "sw.js"])
            var total = 0
            for name in names {
                let served = try await WebAPITests.curl(["\(base)/\(name == "index.html" ? "" : name)"])
                let file = try String(contentsOfFile: Self.repository + "/web/" + name, encoding: .utf8)
                #expect(served.status == 200, "\(name)")
                #expect(served.body == file, "\(name): run scripts/embed-web.py after changing web/")
                #expect(served.headers["content-security-policy"] == "default-src 'self'")
                total += file.utf8.count
            }
            #expect(total < 76_000, "the whole page is \(total) bytes")
            #expect(try await WebAPITests.curl(["\(base)/web/"]).status == 404, "no listing")
        }
    }

    @Test(.enabled(if: browserMissing == nil, Comment(rawValue: browserMissing ?? "")))
    func theFlowsWorkInChromium() async throws {
        // On the phone, outside the clips folder.
        let phone = try TemporaryDirectory()
        try phone.write("reminder.wav", tone)
        let screenshots = Self.repository + "/.build/web-screenshots"
        let outcome = try await withDaemon { [folder, phone, web] base in
            try await Subprocess.run(
                .path("/usr/bin/python3"),
                arguments: [Self.repository + "/scripts/web-test.py", "--base", base, "--password", "correct horse",
                            "--jukebox", DaemonProcess.binaryDirectory + "/jukebox", "--socket", folder.file("c.sock"),
                            "--wav", phone.file("reminder.wav"), "--state", folder.file("state.json"), "--screenshots", screenshots,
                            "--authority", web.authority],
                platformOptions: TestProcesses.options, output: .string(limit: 1 << 16), error: .string(limit: 1 << 16))
        }
        #expect(outcome.terminationStatus.isSuccess, "\(outcome.standardOutput)\n\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("all flows passed"))
    }
}

extension WebPageTests {
    static let rigMissing: String? = browserMissing ?? (PulseRig.isInstalled ? nil : PulseRig.missing)

    /// On the paced sound card: a clip tapped on the page is heard whole; the daemon then stops
    /// and starts again, and the page says it is unreachable, comes back by itself, still
    /// logged in and live, and a clip tapped after the restart is heard too.
    @Test(.enabled(if: rigMissing == nil, Comment(rawValue: rigMissing ?? "")))
    func aTappedClipIsHeardAndThePageComesBackAfterARestart() async throws {
        let folder = try TemporaryDirectory()
        let rig = PulseRig(folder: folder)
        let tones: [Double] = [500, 800]
        for (index, tone) in tones.enumerated() {
            let samples = WAVFile.tone(frequency: tone, frames: 88_200, rate: 44_100, channels: 2)
            try folder.write("c\(index).wav", WAVFile.bytes(samples, encoding: .s16, rate: 44_100, channels: 2))
        }
        try folder.write("password", text: WebDaemon.password + "\n")
        try folder.write("s.json", text: """
            { "device": "pulse", "interval": { "min": "1h", "max": "1h" },
              "http": { "listen": "127.0.0.1:0", "passwordFile": "password" },
              "clips": [ { "file": "c0.wav" }, { "file": "c1.wav" } ] }
            """)
        let socket = folder.file("c.sock")
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--log-level", "debug"]
        let flow = LogLines()
        let browser = try await rig.with {
            try await rig.startCapture()
            let browser = try await Subprocess.run(
                .path("/usr/bin/python3"),
                arguments: [Self.repository + "/scripts/web-test.py", "--flow", "restart", "--password", WebDaemon.password,
                            "--jukebox", DaemonProcess.binaryDirectory + "/jukebox", "--socket", socket,
                            "--authority", folder.file("state.tls/ca.crt")],
                environment: .inherit, platformOptions: TestProcesses.options, input: .inputWriter, output: .sequence, error: .string(limit: 1 << 16)
            ) { execution in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for try await line in execution.standardOutput.strings() { await flow.append(line) }
                        await flow.finish()
                    }
                    let writer = execution.standardInputWriter
                    let first = try await DaemonProcess.withDaemon(arguments, ready: "web remote listening on", environment: rig.environment) { log in
                        let line = await log.lines.first { $0.contains("web remote listening on") } ?? ""
                        let port = line.split(separator: "(port ").last.map { String($0.dropLast()) } ?? ""
                        _ = try await writer.write("https://127.0.0.1:\(port)\n")
                        // The flow's own failure says why (below); do not wait on the daemon then.
                        guard await flow.waitFor("played c0") else { return port }
                        #expect(await log.waitFor("pulse drained"))
                        return port
                    }
                    #expect(first.status == 0, "\(first.lines)")
                    _ = try await writer.write("stopped\n")
                    guard await flow.waitFor("banner shown") else {
                        try await writer.finish()
                        try await group.waitForAll()
                        return
                    }
                    let second = try await DaemonProcess.withDaemon(
                        arguments + ["--http", "127.0.0.1:\(first.result)"], ready: "web remote listening on", environment: rig.environment
                    ) { log in
                        _ = try await writer.write("started\n")
                        guard await flow.waitFor("all flows passed") else { return }
                        #expect(await log.waitUntil { lines in
                            guard let played = lines.firstIndex(where: { $0.contains("played c1") }) else { return false }
                            return lines[played...].contains { $0.contains("pulse drained") }
                        })
                    }
                    #expect(second.status == 0, "\(second.lines)")
                    try await writer.finish()
                    try await group.waitForAll()
                }
            }
            try await rig.stopCapture()
            return browser
        }
        let printed = await flow.lines
        #expect(browser.terminationStatus.isSuccess, "\(printed)\n\(browser.standardError)")
        let segments = try rig.capture(frequencies: tones).segments
        #expect(segments.map(\.frequency) == tones, "each tapped clip is heard, once, in order: \(segments)")
        #expect(segments.allSatisfy { (199...201).contains($0.windows) }, "each whole: \(segments)")
    }
}

extension WebPageTests {
    static let recordingMissing: String? = rigMissing
        ?? (FileManager.default.isExecutableFile(atPath: "/usr/bin/espeak-ng") ? nil : "espeak-ng is not installed (scripts/test.sh installs it): the recorder is not tested")
        ?? (FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") ? nil : "ffmpeg is not installed (scripts/test.sh installs it): the recorder is not tested")

    /// A clip recorded on the page, with Chromium's fake microphone hearing spoken words with a
    /// second of silence before and after them: the page trims the silence and saves the clip,
    /// which is measured as it is added; tapped, it is heard on the paced sound card at the
    /// session's loudness target, as ffmpeg's own `ebur128` measures what was heard.
    @Test(.enabled(if: recordingMissing == nil, Comment(rawValue: recordingMissing ?? "")))
    func aClipRecordedOnThePageIsHeardAtTheLoudnessTarget() async throws {
        let folder = try TemporaryDirectory()
        let rig = PulseRig(folder: folder)
        let words = try await Tool.run("espeak-ng", ["-w", folder.file("words.wav"), "Remember to water the plants."])
        #expect(words.status == 0, "\(words.stderr)")
        let padded = try await Tool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", folder.file("words.wav"),
                                                   "-af", "adelay=1000:all=1,apad=pad_dur=1", "-c:a", "pcm_s16le", folder.file("speech.wav")])
        #expect(padded.status == 0, "\(padded.stderr)")
        try folder.write("c0.wav", WAVFile.bytes(WAVFile.tone(frequency: 500, frames: 44_100, rate: 44_100, channels: 2), encoding: .s16, rate: 44_100, channels: 2))
        try folder.write("password", text: WebDaemon.password + "\n")
        try folder.write("s.json", text: """
            { "device": "pulse", "interval": { "min": "1h", "max": "1h" }, "loudness": -18,
              "http": { "listen": "127.0.0.1:0", "passwordFile": "password" },
              "clips": [ { "file": "c0.wav" } ] }
            """)
        let arguments = [folder.file("s.json"), "--socket", folder.file("c.sock"), "--state", folder.file("state.json"), "--log-level", "debug"]
        try await rig.with {
            try await rig.startCapture()
            let daemon = try await DaemonProcess.withDaemon(arguments, ready: "web remote listening on", environment: rig.environment) { log in
                let line = await log.lines.first { $0.contains("web remote listening on") } ?? ""
                let port = line.split(separator: "(port ").last.map { String($0.dropLast()) } ?? ""
                let page = try await Subprocess.run(
                    .path("/usr/bin/python3"),
                    arguments: [Self.repository + "/scripts/web-test.py", "--flow", "record", "--base", "https://127.0.0.1:\(port)",
                                "--password", WebDaemon.password, "--jukebox", DaemonProcess.binaryDirectory + "/jukebox",
                                "--socket", folder.file("c.sock"), "--authority", folder.file("state.tls/ca.crt"),
                                "--speech", folder.file("speech.wav"), "--screenshots", Self.repository + "/.build/web-screenshots/recorder"],
                    platformOptions: TestProcesses.options, output: .string(limit: 1 << 16), error: .string(limit: 1 << 16))
                let printed = page.standardOutput
                #expect(page.terminationStatus.isSuccess, "\(printed)\n\(page.standardError)")
                guard let id = printed.split(separator: "\n").first(where: { $0.hasPrefix("queued ") })?.dropFirst("queued ".count) else { return }
                #expect(await log.waitUntil { lines in
                    guard let played = lines.firstIndex(where: { $0.contains("played \(id)") }) else { return false }
                    return lines[played...].contains { $0.contains("pulse drained") }
                }, "the recording played through to the end")
            }
            #expect(daemon.status == 0, "\(daemon.lines)")
            try await rig.stopCapture()
        }
        // What was heard: the recording alone (c0 is an hour away), at the target, and no
        // louder than the true-peak ceiling.
        let heard = try await FFmpegLoudness.measure(["-f", "s16le", "-ar", "44100", "-ac", "2", "-i", rig.captureFile])
        print("the recording was heard at \(heard) (target -18 LUFS)")
        #expect(abs(heard.integrated - -18) <= 1, "heard at \(heard)")
        #expect(heard.truePeak <= -0.5, "heard at \(heard)")
    }
}
