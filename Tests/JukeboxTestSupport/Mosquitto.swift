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
                _ = TestProcesses.wait(try TestProcesses.spawn("/usr/bin/mosquitto_passwd", ["-b", folder.file("passwords"), user, password]))
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
            platformOptions: TestProcesses.options, output: .string(limit: 1 << 20), error: .discarded)
        return result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// The messages on `topic` up to the first that is `value` (or until 10 s pass).
    public func messages(_ topic: String, until value: String) async throws -> [String] {
        try await messages(topic, until: { $0 == value })
    }

    /// The messages on `topic` up to the first that `found` takes (or until 10 s pass).
    public func messages(_ topic: String, until found: @escaping @Sendable (String) -> Bool) async throws -> [String] {
        let result = try await Subprocess.run(
            .path("/usr/bin/mosquitto_sub"), arguments: ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-W", "10"],
            platformOptions: TestProcesses.options, input: .none, output: .sequence, error: .discarded
        ) { execution in
            var seen: [String] = []
            for try await line in execution.standardOutput.strings() {
                let message = line.hasSuffix("\n") ? String(line.dropLast()) : line
                seen.append(message)
                if found(message) {
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
            platformOptions: TestProcesses.options, output: .discarded, error: .discarded)
    }

    /// `mosquitto_sub -v` on `topics` while `body` runs, writing what arrives to a file the
    /// test reads; ready once a retained marker of the test's own has arrived, so nothing
    /// published after that is missed.
    public func subscribed<T: Sendable>(_ topics: [String], _ body: @Sendable (Subscriber) async throws -> T) async throws -> T {
        let file = folder.file("sub-\(UInt64.random(in: 0...UInt64.max)).txt")
        _ = FileManager.default.createFile(atPath: file, contents: nil)
        let output = open(file, O_WRONLY | O_CLOEXEC)
        guard output >= 0 else { throw SubscriberFailed() }
        defer { close(output) }
        // Line by line into the file, not in blocks: what arrived is there to read at once.
        let pid = try TestProcesses.spawn(
            "/usr/bin/stdbuf", ["-oL", "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", "\(port)", "-v", "-q", "1"] + (topics + [Self.readyTopic]).flatMap { ["-t", $0] },
            output: output)
        defer {
            // SIGKILL: a process started from a test's thread may have SIGTERM blocked.
            kill(pid, SIGKILL)
            _ = TestProcesses.wait(pid)
        }
        let subscriber = Subscriber(file: file)
        try await publish(Self.readyTopic, "ready", retain: true)
        guard await subscriber.waitUntil({ $0.contains { $0.hasPrefix(Self.readyTopic + " ") } }) else { throw SubscriberFailed() }
        return try await body(subscriber)
    }

    struct SubscriberFailed: Error {}
    static let readyTopic = "jukebox-test/ready"

    /// What a `subscribed` mosquitto_sub has received: `TOPIC PAYLOAD` lines.
    public struct Subscriber: Sendable {
        let file: String

        public var lines: [String] {
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init)
        }

        /// The payloads received on `topic`, in order.
        public func payloads(_ topic: String) -> [String] {
            lines.compactMap { $0.hasPrefix(topic + " ") ? String($0.dropFirst(topic.count + 1)) : nil }
        }

        /// Waits (up to 20 s, looking every 20 ms) until the lines satisfy `condition`.
        public func waitUntil(_ condition: ([String]) -> Bool) async -> Bool {
            for _ in 0..<1000 {
                if condition(lines) { return true }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return condition(lines)
        }
    }
}
