import Foundation
import Glibc
import JukeboxTestSupport
import Subprocess
import Testing

/// A local network of the test's own (scripts/mdns-rig.sh): the device's network namespace
/// with avahi-daemon, Home Assistant's, a veth between them, and a D-Bus system bus.
struct MDNSRig {
    static let script = HomeAssistantClient.root + "/scripts/mdns-rig.sh"
    static let programs = ["/usr/sbin/avahi-daemon", "/usr/bin/avahi-browse", "/usr/bin/dbus-daemon", "/usr/bin/nsenter", "/usr/bin/unshare"]
    static var isPossible: Bool {
        geteuid() == 0 && programs.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            && (FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") || FileManager.default.isExecutableFile(atPath: "/usr/bin/ip"))
    }
    static let impossible = "mDNS tests need root (network namespaces), iproute2, dbus-daemon, avahi-daemon and avahi-utils: skipped"

    let folder: String
    var bus: String { "unix:path=\(folder)/bus" }

    /// The device's side: a program and its arguments run there.
    func onDevice(_ command: [String]) throws -> [String] { try ["/usr/bin/nsenter", "--net=/run/netns/\(name("device"))"] + command }
    /// Home Assistant's side.
    func atHome(_ command: [String]) throws -> [String] { try ["/usr/bin/nsenter", "--net=/run/netns/\(name("home"))"] + command }

    private func name(_ side: String) throws -> String {
        try String(contentsOfFile: "\(folder)/\(side).netns", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func avahiStart() async throws { try await run("avahi-start") }
    func avahiStop() async throws { try await run("avahi-stop") }

    private func run(_ command: String) async throws {
        let output = try await Tool.run(Self.script, [command, folder])
        if output.status != 0 { throw RigFailed(description: "mdns-rig.sh \(command): \(output.stderr)") }
    }

    /// Starts the rig (with avahi-daemon unless told not to), runs `body`, and ends it.
    static func with<T: Sendable>(in folder: TemporaryDirectory, avahi: Bool = true, _ body: (MDNSRig) async throws -> T) async throws -> T {
        let rig = MDNSRig(folder: folder.file("rig"))
        do {
            try await rig.run("start")
            if avahi { try await rig.avahiStart() }
            let value = try await body(rig)
            try await rig.run("stop")
            return value
        } catch {
            try? await rig.run("stop")
            throw error
        }
    }
}

/// A program that runs beside the test (Home Assistant browsing, another device), its
/// standard output arriving line by line; stopped with SIGTERM once `body` is done, unless it
/// has ended itself.
func withProgram<T: Sendable>(_ command: [String], _ body: (LogLines) async throws -> T) async throws -> T {
    let lines = LogLines()
    let result = try await Subprocess.run(
        .path(.init(command[0])), arguments: Arguments(Array(command.dropFirst())), platformOptions: TestProcesses.options,
        input: .none, output: .sequence, error: .discarded
    ) { execution in
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await line in execution.standardOutput.strings() { await lines.append(line) }
                await lines.finish()
            }
            let value = try await body(lines)
            try? execution.send(signal: .terminate)
            try await group.waitForAll()
            return value
        }
    }
    return result.closureResult
}

/// Home Assistant finds the media player as it finds ESPHome devices: by mDNS, through the
/// avahi-daemon the device runs. Home Assistant's side is python-zeroconf (what its zeroconf
/// integration uses) and aioesphomeapi, in a network namespace of its own.
@Suite(
    "Home Assistant discovers the media player", .timeLimit(.minutes(1)),
    .enabled(if: HomeAssistantClient.isInstalled, Comment(rawValue: HomeAssistantClient.missing)),
    .enabled(if: MDNSRig.isPossible, Comment(rawValue: MDNSRig.impossible)))
struct ESPHomeDiscoveryTests {
    let folder: TemporaryDirectory
    static let key = ESPHomeMediaPlayerTests.key
    static let service = "desk-speaker._esphomelib._tcp.local."

    init() throws {
        folder = try TemporaryDirectory()
        let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 8000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
        try folder.write("water.wav", tone)
        try folder.write("Desk.json", text: """
            { "name": "Desk speaker", "interval": { "min": "1h", "max": "1h" },
              "esphome": { "listen": "0.0.0.0:0", "encryptionKey": "\(Self.key)" },
              "clips": [ { "file": "water.wav", "title": "Drink some water" } ] }
            """)
    }

    var arguments: [String] { [folder.file("Desk.json"), "--socket", folder.file("c.sock"), "--state", folder.file("state.json"), "--device", "null"] }

    /// jukeboxd on the device's side of the rig.
    func withDaemon<T: Sendable>(_ rig: MDNSRig, _ body: @Sendable (LogLines) async throws -> T) async throws -> T {
        try await DaemonProcess.withDaemon(
            arguments, ready: "Home Assistant's media player \"Desk speaker\" listening", environment: ["DBUS_SYSTEM_BUS_ADDRESS": rig.bus],
            wrapper: try rig.onDevice([]), body
        ).result
    }

    static func port(_ lines: [String]) -> Int? {
        for line in lines {
            guard let range = line.range(of: "listening on 0.0.0.0:") else { continue }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        return nil
    }

    /// ha-client.py on Home Assistant's side.
    static func homeAssistant(_ rig: MDNSRig, _ arguments: [String]) async throws -> (lines: [String], status: Int32) {
        let command = try rig.atHome([HomeAssistantClient.python, HomeAssistantClient.script] + arguments)
        let output = try await Tool.run(command[0], Array(command.dropFirst()))
        return (output.stdout.split(separator: "\n").map(String.init), output.status)
    }

    static func json(_ line: String?) -> [String: Any] {
        guard let line, let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return [:] }
        return object
    }

    @Test func homeAssistantDiscoversThePlayerConnectsToTheAddressAnnouncedAndSeesItGoAtTheStop() async throws {
        try await MDNSRig.with(in: folder) { rig in
            try await withProgram(try rig.atHome([HomeAssistantClient.python, HomeAssistantClient.script, "--watch", Self.service])) { watcher in
                try await withDaemon(rig) { log in
                    #expect(await log.waitFor("Home Assistant can discover the media player \"Desk speaker\": announced on the network as desk-speaker (_esphomelib._tcp, through avahi-daemon)"))
                    let port = try #require(Self.port(await log.lines))
                    #expect(await watcher.waitFor(#"{"step": "added", "name": "desk-speaker._esphomelib._tcp.local."}"#))

                    let run = try await Self.homeAssistant(rig, ["--discover", "--key", Self.key, "info"])
                    #expect(run.status == 0, "\(run.lines)")
                    let found = Self.json(run.lines.first { $0.contains(#""step": "discovered""#) })
                    let info = Self.json(run.lines.first { $0.contains(#""step": "info""#) })
                    #expect(found["name"] as? String == Self.service)
                    // Home Assistant connects to the address and port announced: the daemon's.
                    #expect(found["host"] as? String == "10.77.0.1" && found["port"] as? Int == port, "\(found)")
                    let properties = found["properties"] as? [String: String] ?? [:]
                    #expect(properties == [
                        "api_encryption": "Noise_NNpsk0_25519_ChaChaPoly_SHA256", "board": "jukeboxd", "friendly_name": "Desk speaker",
                        "mac": properties["mac"] ?? "", "network": properties["network"] ?? "", "platform": "host", "version": "2025.12.0",
                    ], "\(properties)")
                    // The device Home Assistant keys on: the announced MAC is the one the device
                    // gives once connected, and the name its node name.
                    let mac = try #require(info["mac"] as? String)
                    #expect(properties["mac"] == mac.lowercased().replacingOccurrences(of: ":", with: ""), "\(properties) \(info)")
                    #expect(properties["mac"]?.count == 12)
                    #expect(["ethernet", "wifi"].contains(properties["network"] ?? ""))
                    #expect(info["name"] as? String == "desk-speaker")
                }
                // The stop withdraws the service: Home Assistant sees its goodbye.
                #expect(await watcher.waitFor(#"{"step": "removed", "name": "desk-speaker._esphomelib._tcp.local."}"#))
            }
        }
    }

    @Test func anAvahiDaemonThatStartsLaterOrRestartsIsFollowed() async throws {
        try await MDNSRig.with(in: folder, avahi: false) { rig in
            try await withDaemon(rig) { log in
                let missing = "avahi-daemon is not running, so Home Assistant cannot discover the media player \"Desk speaker\": start it (sudo systemctl enable --now avahi-daemon) and jukeboxd announces it at once, or add it in Home Assistant by address (Settings → Devices & services → Add integration → ESPHome, host this machine's address:"
                let announced = "announced on the network as desk-speaker (_esphomelib._tcp"
                #expect(await log.waitFor(missing))
                try await rig.avahiStart()
                #expect(await log.waitFor(announced))
                try await rig.avahiStop()
                #expect(await log.waitUntil { $0.filter { $0.contains(missing) }.count == 2 })
                try await rig.avahiStart()
                #expect(await log.waitUntil { $0.filter { $0.contains(announced) }.count == 2 })
                let run = try await Self.homeAssistant(rig, ["--discover", "--key", Self.key, "info"])
                #expect(run.status == 0 && run.lines.contains { $0.contains(#""name": "desk-speaker._esphomelib._tcp.local.""#) }, "\(run.lines)")
            }
        }
    }

    @Test func aNameAnotherDeviceOnTheNetworkHasIsChangedAndTheLogSaysSo() async throws {
        try await MDNSRig.with(in: folder) { rig in
            try await withProgram(try rig.atHome([HomeAssistantClient.python, HomeAssistantClient.script, "--announce", "desk-speaker"])) { other in
                #expect(await other.waitFor(#""step": "announced""#))
                try await withDaemon(rig) { log in
                    #expect(await log.waitFor("another device on the network is announced as desk-speaker; the media player \"Desk speaker\" is announced as desk-speaker #2 instead. Give each jukeboxd its own esphome.name"))
                    #expect(await log.waitFor("announced on the network as desk-speaker #2 (_esphomelib._tcp"))
                }
            }
        }
    }
}

/// Without the rig: a machine whose D-Bus cannot be reached.
@Suite("The media player without D-Bus", .timeLimit(.minutes(1)))
struct ESPHomeWithoutDiscoveryTests {
    @Test func withoutTheSystemsDBusTheLogSaysToAddTheDeviceByAddress() async throws {
        let folder = try TemporaryDirectory()
        let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 8000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
        try folder.write("water.wav", tone)
        try folder.write("Desk.json", text: """
            { "name": "Desk speaker", "interval": { "min": "1h", "max": "1h" },
              "esphome": { "listen": "0.0.0.0:0", "encryptionKey": "\(ESPHomeMediaPlayerTests.key)" },
              "clips": [ { "file": "water.wav" } ] }
            """)
        let arguments = [folder.file("Desk.json"), "--socket", folder.file("c.sock"), "--state", folder.file("state.json"), "--device", "null"]
        let run = try await DaemonProcess.withDaemon(
            arguments, ready: "Home Assistant's media player \"Desk speaker\" listening",
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(folder.file("no-bus"))"]
        ) { log in
            await log.waitFor("the system's D-Bus cannot be reached, so avahi-daemon cannot announce the media player \"Desk speaker\"; jukeboxd tries again every minute. Meanwhile add it in Home Assistant by address (Settings → Devices & services → Add integration → ESPHome, host this machine's address:")
        }
        #expect(run.result, "\(run.lines)")
        #expect(run.status == 0, "a missing D-Bus is no reason to stop: \(run.lines)")
    }
}
