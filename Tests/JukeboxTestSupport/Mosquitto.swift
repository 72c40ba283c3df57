import Foundation
import Subprocess

/// A real mosquitto broker on a loopback port of its own, started and stopped by the test (by
/// its pid), with an optional password file. CI installs mosquitto and mosquitto-clients.
public struct Mosquitto: Sendable {
    public static var isInstalled: Bool {
        ["/usr/sbin/mosquitto", "/usr/bin/mosquitto_pub", "/usr/bin/mosquitto_sub", "/usr/bin/mosquitto_passwd"]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }
    public static let missing = "mosquitto is not installed (apt-get install mosquitto mosquitto-clients): the MQTT tests against a broker are skipped"

    public let folder: TemporaryDirectory
    public let port: Int

    /// `users`: name → password; none means anonymous clients are allowed.
    public init(users: [String: String] = [:]) throws {
        folder = try TemporaryDirectory()
        port = Self.freePort()
        var config = "listener \(port) 127.0.0.1\npersistence false\nlog_dest stderr\nlog_type all\n"
        // As root, mosquitto would become the mosquitto user, who cannot read the test's folder.
        if getuid() == 0 { config += "user root\n" }
        if users.isEmpty {
            config += "allow_anonymous true\n"
        } else {
            try folder.write("passwords", text: "")
            for (user, password) in users {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
                process.arguments = ["-b", folder.file("passwords"), user, password]
                try process.run()
                process.waitUntilExit()
            }
            config += "allow_anonymous false\npassword_file \(folder.file("passwords"))\n"
        }
        try folder.write("mosquitto.conf", text: config)
    }

    /// Runs the broker while `body` runs; `body` gets a handle to stop and start it again.
    public func run<T: Sendable>(_ body: @Sendable (Broker) async throws -> T) async throws -> T {
        try await Broker("/usr/sbin/mosquitto", ["-c", folder.file("mosquitto.conf")]) { $0.hasSuffix(" running") }.whileRunning(body)
    }

    /// The broker: ready once it says it is running (its "Opening … listen socket" comes
    /// before the bind).
    public typealias Broker = ServerProcess


    /// A loopback port nothing listens on now, for a server the test starts.
    public static func freePort() -> Int { Loopback.serverPort() }

    /// `mosquitto_sub`: the first `count` messages on `topic` (retained ones included), as
    /// `TOPIC PAYLOAD` lines when `verbose`; fewer if `wait` seconds pass first.
    public func messages(_ topic: String, count: Int = 1, verbose: Bool = false, wait: Int = 10, user: (String, String)? = nil) async throws -> [String] {
        let credentials = user.map { ["-u", $0.0, "-P", $0.1] } ?? []
        let result = try await Subprocess.run(
            .path("/usr/bin/mosquitto_sub"),
            arguments: Arguments(["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-C", "\(count)", "-W", "\(wait)"] + (verbose ? ["-v"] : []) + credentials),
            output: .string(limit: 1 << 20), error: .discarded)
        return result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// The messages on `topic` up to the first that is `value` (or until 10 s pass).
    public func messages(_ topic: String, until value: String) async throws -> [String] {
        let result = try await Subprocess.run(
            .path("/usr/bin/mosquitto_sub"), arguments: ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-W", "10"],
            input: .none, output: .sequence, error: .discarded
        ) { execution in
            var seen: [String] = []
            for try await line in execution.standardOutput.strings() {
                let message = line.hasSuffix("\n") ? String(line.dropLast()) : line
                seen.append(message)
                if message == value {
                    try? execution.send(signal: .terminate)
                    break
                }
            }
            return seen
        }
        return result.closureResult
    }

    /// `mosquitto_pub`.
    public func publish(_ topic: String, _ message: String, retain: Bool = false, user: (String, String)? = nil) async throws {
        let credentials = user.map { ["-u", $0.0, "-P", $0.1] } ?? []
        _ = try await Subprocess.run(
            .path("/usr/bin/mosquitto_pub"),
            arguments: Arguments(["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-m", message, "-q", "1"] + (retain ? ["-r"] : []) + credentials),
            output: .discarded, error: .discarded)
    }
}
