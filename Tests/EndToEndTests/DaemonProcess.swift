import Foundation
import JukeboxTestSupport
import Subprocess

/// Runs the built binaries. Uses swift-subprocess, whose pipes are close-on-exec, so a child
/// started by one test never holds another test's pipe open, which would keep that test
/// waiting for an end of output that never comes.
enum DaemonProcess {
    /// Where `jukeboxd` and `jukebox` are: the folder that JUKEBOXD_TEST_BINARIES names
    /// (scripts/aarch64-tests.sh names the release programs that go into the arm64 package),
    /// or else beside the test bundle.
    static let binaryDirectory: String = {
        if let named = ProcessInfo.processInfo.environment["JUKEBOXD_TEST_BINARIES"], !named.isEmpty { return named }
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
    }()

    struct Outcome {
        /// The exit status, or nil if the process was killed by a signal.
        var status: Int32?
        var stdout: String
        var stderr: String
    }

    /// This process's environment with `changes` on top.
    static func inheriting(_ changes: [String: String]) -> Environment {
        .inherit.updating(Dictionary(uniqueKeysWithValues: changes.map { (Environment.Key(stringLiteral: $0.key), Optional($0.value)) }))
    }

    static func status(_ termination: TerminationStatus) -> Int32? {
        if case .exited(let code) = termination { return Int32(code) }
        return nil
    }

    /// Runs to completion and collects both outputs.
    /// `in`: the folder it runs in (the test's own by default).
    static func run(_ arguments: [String], tool: String = "jukeboxd", environment: [String: String] = [:], in folder: String? = nil) async throws -> Outcome {
        let result = try await Subprocess.run(
            .path(.init(binaryDirectory + "/" + tool)), arguments: Arguments(arguments),
            environment: inheriting(environment), workingDirectory: folder.map { .init($0) },
            platformOptions: TestProcesses.options, output: .string(limit: 1 << 20), error: .string(limit: 1 << 20))
        return Outcome(status: status(result.terminationStatus), stdout: result.standardOutput, stderr: result.standardError)
    }
}

extension DaemonProcess {
    /// Starts jukeboxd, waits for a log line containing `ready`, runs `body` while the daemon
    /// runs, then stops it with SIGTERM. Returns the daemon's exit status, its log lines, and
    /// what `body` returned.
    /// `wrapper`: a program and its arguments that run jukeboxd (its path and `arguments` follow
    /// them), such as `unshare` to give it a mount namespace of its own.
    static func withDaemon<T: Sendable>(
        _ arguments: [String], ready: String, stopWith stop: Signal = .terminate, environment: [String: String] = [:],
        wrapper: [String] = [], _ body: @Sendable (LogLines) async throws -> T
    ) async throws -> (status: Int32?, lines: [String], result: T) {
        let log = LogLines()
        let daemon = binaryDirectory + "/jukeboxd"
        let result = try await Subprocess.run(
            .path(.init(wrapper.first ?? daemon)), arguments: Arguments(wrapper.isEmpty ? arguments : Array(wrapper.dropFirst()) + [daemon] + arguments),
            environment: inheriting(environment),
            platformOptions: TestProcesses.options, input: .none, output: .discarded, error: .sequence
        ) { execution in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await line in execution.standardError.strings() { await log.append(line) }
                    await log.finish()
                }
                guard await log.waitFor(ready) else { return T?.none }
                let value = try await body(log)
                try execution.send(signal: stop)
                try await group.waitForAll()
                return value
            }
        }
        let lines = await log.lines
        guard let value = result.closureResult else {
            throw DaemonExited(lines: lines)
        }
        return (status(result.terminationStatus), lines, value)
    }
}

/// The daemon ended before it was ready.
struct DaemonExited: Error, CustomStringConvertible {
    var lines: [String]
    var description: String { "jukeboxd exited before it was ready:\n" + lines.joined(separator: "\n") }
}

/// A suite whose tests run one daemon at a time on `socket`, and talk to it with the built
/// `jukebox`.
protocol DaemonSuite {
    var socket: String { get }
}

extension DaemonSuite {
    /// `jukebox --socket SOCKET WORDS…`: its exit status and output.
    func jukebox(_ words: String...) async throws -> DaemonProcess.Outcome {
        try await jukebox(words)
    }

    func jukebox(_ words: [String]) async throws -> DaemonProcess.Outcome {
        try await DaemonProcess.run(["--socket", socket] + words, tool: "jukebox")
    }
}
