import Foundation
import JukeboxTestSupport
import Testing

/// Real ALSA faults, no sound card: an ALSA configuration of the test's own names a device
/// that does not exist when jukeboxd starts and is defined while it runs, as a USB DAC that
/// enumerates after boot would appear.
@Suite("Device faults", .timeLimit(.minutes(1)))
struct DeviceFaultTests {
    let folder: TemporaryDirectory
    let samples = WAVFile.tone(frequency: 440, frames: 8000, rate: 8000, channels: 1)

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("a.wav", WAVFile.bytes(samples, encoding: .s16, rate: 8000, channels: 1))
        try folder.write("s.json", text: #"{ "device": "jukebox_late", "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }"#)
        try folder.write("asound.conf", text: "# no devices yet\n")
    }

    @Test func deviceThatAppearsLaterGetsTheQueuedClipWhole() async throws {
        let socket = folder.file("c.sock")
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json")]
        let run = try await DaemonProcess.withDaemon(
            arguments, ready: "control socket listening", environment: ["ALSA_CONFIG_PATH": folder.file("asound.conf")]
        ) { [self] log in
            let played = try await DaemonProcess.run(["--socket", socket, "play", "a"], tool: "jukebox")
            #expect(played.status == 0)
            #expect(await log.waitFor("stays queued, retrying"))
            let status = try await DaemonProcess.run(["--socket", socket, "status"], tool: "jukebox")
            #expect(status.stdout.contains("device:    jukebox_late (retrying in"), "\(status.stdout)")
            // The device appears. The file is replaced, not rewritten in place: libasound notices a
            // changed configuration by its inode and its mtime in whole seconds.
            try folder.write("asound.conf.new", text: """
                pcm.jukebox_late { type file slave.pcm { type null } file "\(folder.file("out.raw"))" format "raw" }
                """)
            #expect(rename(folder.file("asound.conf.new"), folder.file("asound.conf")) == 0)
            #expect(await log.waitFor("played a (a.wav"))
            return status
        }
        #expect(run.status == 0)
        #expect(run.lines.contains { $0.contains("audio device \"jukebox_late\" is working again") })
        #expect(try folder.read("out.raw") == WAVFile.pcm16(samples), "the clip plays whole, from its start")
    }

    @Test func clipWaitingForTheDeviceSurvivesARestart() async throws {
        let socket = folder.file("c.sock")
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json")]
        let environment = ["ALSA_CONFIG_PATH": folder.file("asound.conf")]
        let first = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: environment) { log in
            _ = try await DaemonProcess.run(["--socket", socket, "play", "a"], tool: "jukebox")
            return await log.waitFor("stays queued, retrying")
        }
        #expect(first.result)
        #expect(first.lines.contains { $0.contains("a will play again from its start after a restart") })
        let second = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: environment) { _ in
            try await DaemonProcess.run(["--socket", socket, "--json", "status"], tool: "jukebox").stdout
        }
        #expect(second.lines.contains { $0.contains("restored 1 queued clip") }, "\(second.lines)")
    }

    /// A PCM added to ~/.asoundrc while the daemon runs used to stay unknown until a
    /// restart: libasound re-reads only the top configuration file when it changes, not the
    /// files it loads. The daemon now reads the configuration afresh after a failed open.
    @Test func aDeviceAddedToAsoundrcIsFoundWithoutARestart() async throws {
        let socket = folder.file("c.sock")
        let arguments = [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json")]
        let environment = ["HOME": folder.path, "XDG_CONFIG_HOME": folder.file("config"), "ALSA_CONFIG_PATH": ""]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: environment) { [self] log in
            #expect(try await DaemonProcess.run(["--socket", socket, "play", "a"], tool: "jukebox").status == 0)
            #expect(await log.waitFor("stays queued, retrying"))
            try folder.write(".asoundrc", text: """
                pcm.jukebox_late { type file slave.pcm { type null } file "\(folder.file("out.raw"))" format "raw" }
                """)
            return await log.waitFor("played a (a.wav")
        }
        #expect(run.result)
        #expect(try folder.read("out.raw") == WAVFile.pcm16(samples), "the clip plays whole, from its start")
    }
}
