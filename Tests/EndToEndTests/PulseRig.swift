import Foundation
import JukeboxTestSupport
import Subprocess

/// A real-time paced sound card for a test: `scripts/pulse-rig.sh` in a folder of the test's
/// own, so tests running side by side each have their own PulseAudio server.
struct PulseRig {
    let folder: TemporaryDirectory
    var directory: String { folder.file("pulse") }
    var server: String { "unix:\(directory)/native" }
    var captureFile: String { folder.file("capture.raw") }
    /// What jukeboxd needs to play to the rig through ALSA's `pulse` PCM.
    var environment: [String: String] { ["PULSE_SERVER": server, "HOME": directory + "/home"] }

    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/pulse-rig.sh").path

    /// PulseAudio, its tools and ALSA's pulse plugin are all needed; CI installs them.
    static var isInstalled: Bool {
        let files = FileManager.default
        let tools = ["pulseaudio", "pacat", "parecord", "pactl"].allSatisfy { files.isExecutableFile(atPath: "/usr/bin/" + $0) }
        let plugin = ["x86_64", "aarch64"].contains {
            files.fileExists(atPath: "/usr/lib/\($0)-linux-gnu/alsa-lib/libasound_module_pcm_pulse.so")
        }
        return tools && plugin
    }

    static let missing = "PulseAudio is not installed (apt-get install pulseaudio pulseaudio-utils libasound2-plugins): real-time tests skipped"

    func start() async throws { try await run("start") }
    func stop() async throws { try await run("stop") }
    func startCapture() async throws { try await run("capture", captureFile) }
    func stopCapture() async throws { try await run("stop-capture") }

    /// Runs `body` with the rig up, and always takes it down again.
    func with<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await start()
        do {
            let value = try await body()
            try await stop()
            return value
        } catch {
            try? await stop()
            throw error
        }
    }

    func capture(frequencies: [Double]) throws -> CaptureAnalysis {
        CaptureAnalysis(bytes: try folder.read("capture.raw"), frequencies: frequencies)
    }

    private func run(_ arguments: String...) async throws {
        let result = try await Subprocess.run(
            .path("/bin/sh"), arguments: Arguments([Self.script] + arguments.prefix(1) + [directory] + arguments.dropFirst()),
            platformOptions: TestProcesses.options, output: .string(limit: 1 << 16), error: .string(limit: 1 << 16))
        guard case .exited(0) = result.terminationStatus else {
            throw RigFailed(description: "pulse-rig.sh \(arguments.joined(separator: " ")): \(result.standardError)")
        }
    }
}

struct RigFailed: Error, CustomStringConvertible {
    var description: String
}
