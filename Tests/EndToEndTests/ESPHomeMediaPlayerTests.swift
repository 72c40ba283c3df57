import Foundation
import JukeboxCore
import JukeboxTestSupport
import Subprocess
import Testing

/// Home Assistant's side: aioesphomeapi (the library of Home Assistant's ESPHome integration),
/// from the environment scripts/esphome/client-venv.sh makes, running scripts/esphome/ha-client.py.
enum HomeAssistantClient {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let python = root + "/.build/ha-venv/bin/python3"
    static let script = root + "/scripts/esphome/ha-client.py"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: python) }
    static let missing = "aioesphomeapi's environment is missing (scripts/esphome/client-venv.sh makes it; scripts/test.sh runs it): the media player's end-to-end tests are skipped"

    /// Runs the steps; the lines it printed, and its exit status.
    static func run(port: Int, key: String?, serve: String? = nil, _ steps: [String]) async throws -> (lines: [String], status: Int32) {
        var arguments = [script, "--port", "\(port)"]
        if let key { arguments += ["--key", key] }
        if let serve { arguments += ["--serve", serve] }
        let output = try await Tool.run(python, arguments + steps)
        return (output.stdout.split(separator: "\n").map(String.init), output.status)
    }

    /// The port the daemon's log says the media player listens on.
    static func port(_ lines: [String]) -> Int? {
        for line in lines {
            guard let range = line.range(of: "listening on 127.0.0.1:") else { continue }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        return nil
    }
}

/// jukeboxd's media player driven end to end by aioesphomeapi: the key, the device and its
/// entity, states, and the commands, each landing in the daemon as any front end's would.
@Suite("Home Assistant's media player", .timeLimit(.minutes(1)), .enabled(if: HomeAssistantClient.isInstalled, Comment(rawValue: HomeAssistantClient.missing)))
struct ESPHomeMediaPlayerTests: DaemonSuite {
    let folder: TemporaryDirectory
    static let key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
    var socket: String { folder.file("c.sock") }
    var arguments: [String] { [folder.file("Desk.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }

    init() throws {
        folder = try TemporaryDirectory()
        let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 8000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
        try folder.write("water.wav", tone)
        try folder.write("chime.wav", tone)
        try folder.write("Desk.json", text: """
            { "name": "Desk speaker", "interval": { "min": "1h", "max": "1h" }, "volume": 0.9,
              "esphome": { "listen": "127.0.0.1:0", "encryptionKey": "\(Self.key)" },
              "clips": [ { "file": "water.wav", "title": "Drink some water" }, { "file": "chime.wav", "enabled": false } ] }
            """)
    }

    func withDaemon<T: Sendable>(_ body: @Sendable (Int, LogLines) async throws -> T) async throws -> T {
        try await DaemonProcess.withDaemon(arguments, ready: "Home Assistant's media player \"Desk speaker\" listening") { log in
            let port = try #require(HomeAssistantClient.port(await log.lines))
            return try await body(port, log)
        }.result
    }

    @Test func homeAssistantConnectsWithTheKeyFindsThePlayerAndDrivesIt() async throws {
        try await withDaemon { port, log in
            let run = try await HomeAssistantClient.run(port: port, key: Self.key, [
                "info", "entities", "states", "volume:0.3", "command:pause", "wait:paused", "command:mute", "wait:paused",
            ])
            #expect(run.status == 0, "\(run.lines)")
            #expect(run.lines.first == #"{"step": "connected", "api_version": [1, 13]}"#)
            let info = run.lines.first { $0.hasPrefix(#"{"step": "info""#) } ?? ""
            #expect(info.contains(#""name": "desk-speaker", "friendly_name": "Desk speaker""#) && info.contains(#""voice_assistant_feature_flags": 17"#), "\(info)")
            #expect(info.contains(#""api_encryption_supported": true"#))
            let entities = run.lines.first { $0.hasPrefix(#"{"step": "entities""#) } ?? ""
            #expect(entities.contains(#""type": "MediaPlayerInfo", "object_id": "media_player""#) && entities.contains(#""supports_pause": true"#), "\(entities)")
            #expect(entities.contains(#""formats": [["flac", 48000, 2, 0], ["flac", 48000, 2, 1]]"#), "FLAC at 48 kHz for music and announcements")
            #expect(run.lines.contains(#"{"step": "states", "state": "idle", "volume": 0.9, "muted": false}"#), "\(run.lines)")
            #expect(run.lines.contains(#"{"step": "volume:0.3", "state": "idle", "volume": 0.3, "muted": false}"#), "\(run.lines)")
            #expect(run.lines.contains(#"{"step": "wait:paused", "state": "paused", "volume": 0.3, "muted": false}"#), "\(run.lines)")
            // Muted: a volume of 0, which every front end sees; the unmute brings back 30.
            #expect(try await jukebox("volume").stdout == "volume 0\n")
            #expect(try await jukebox("status").stdout.contains("paused"))
            let unmuted = try await HomeAssistantClient.run(port: port, key: Self.key, ["states", "command:unmute", "volume:0.3", "command:play", "wait:idle"])
            #expect(unmuted.status == 0, "\(unmuted.lines)")
            #expect(unmuted.lines.contains(#"{"step": "states", "state": "paused", "volume": 0.0, "muted": true}"#), "\(unmuted.lines)")
            #expect(try await jukebox("volume").stdout == "volume 30\n")
            // Told of by the state file, as what any front end asks.
            let saved = try String(decoding: FilePath.read(folder.file("state.json"), limit: 1 << 20), as: UTF8.self)
            #expect(saved.contains(#""volume":0.3"#), "\(saved)")
            #expect(await log.waitFor("Home Assistant's media player: \"jukeboxd tests\" connected from 127.0.0.1"))
        }
    }

    @Test func withoutTheKeyOrWithAnotherHomeAssistantIsRefusedAndTheNextIsServed() async throws {
        try await withDaemon { port, log in
            let plain = try await HomeAssistantClient.run(port: port, key: nil, ["info"])
            #expect(plain.status == 1 && plain.lines.last?.contains(#""error": "RequiresEncryptionAPIError""#) == true, "\(plain.lines)")
            let other = try await HomeAssistantClient.run(port: port, key: "MTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTE=", ["info"])
            #expect(other.status == 1 && other.lines.last?.contains(#""error": "InvalidEncryptionKeyAPIError""#) == true, "\(other.lines)")
            #expect(await log.waitFor("closed a connection from 127.0.0.1: it sent plaintext, and this device has an encryption key: give Home Assistant the key"))
            #expect(await log.waitFor("closed a connection from 127.0.0.1: its encryption key is not this device's: give Home Assistant the session's esphome.encryptionKey"))
            let right = try await HomeAssistantClient.run(port: port, key: Self.key, ["info"])
            #expect(right.status == 0, "\(right.lines)")
        }
    }

    @Test func playMediaAndAnnouncementsAreFetchedQueuedAndAnsweredOnceHeard() async throws {
        try await withDaemon { port, log in
            // A connection's media requests are taken in order: the missing address is fetched
            // (and refused) before the announcement, whose end the client waits for.
            let run = try await HomeAssistantClient.run(port: port, key: Self.key, serve: folder.file("water.wav"), [
                "states", "play:@SERVED@", "wait:playing", "wait:idle", "play:@MISSING@", "announce:@SERVED@|@SERVED@", "play:@MISSING@",
            ])
            #expect(run.status == 0, "\(run.lines)")
            #expect(run.lines.contains { $0.hasPrefix(#"{"step": "announce:http://127.0.0.1:"#) && $0.hasSuffix(#""success": true}"#) }, "\(run.lines)")
            #expect(await log.waitFor("could not be fetched: the server has no media there (404); check the address; nothing was kept"))
            let history = try await jukebox("history").stdout
            #expect(history.components(separatedBy: "media  completed").count == 3, "the address, then the announcement: \(history)")
            // What played is not kept: the fetch after it (refused, since the client and its
            // server are gone by then) found nothing that needs it.
            #expect(await log.waitUntil { lines in lines.filter { $0.contains("refused the media at http://127.0.0.1:") }.count == 2 })
            // A fetch that fails is told of in a fetch's words only, not an upload's.
            let lines = await log.lines
            #expect(!lines.contains { $0.contains("the upload of") }, "\(lines)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file(".media")).isEmpty)
        }
    }
}
