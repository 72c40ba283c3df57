import Foundation
import Subprocess

/// Runs the built binaries (they sit beside the test bundle). Uses swift-subprocess, whose
/// pipes are close-on-exec, so a child started by one test never holds another test's pipe
/// open, which would keep that test waiting for an end of output that never comes.
enum DaemonProcess {
    static var binaryDirectory: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
    }

    struct Outcome {
        /// The exit status, or nil if the process was killed by a signal.
        var status: Int32?
        var stdout: String
        var stderr: String
    }

    static func status(_ termination: TerminationStatus) -> Int32? {
        if case .exited(let code) = termination { return Int32(code) }
        return nil
    }

    /// Runs to completion and collects both outputs.
    static func run(_ arguments: [String], tool: String = "jukeboxd") async throws -> Outcome {
        let result = try await Subprocess.run(
            .path(.init(binaryDirectory + "/" + tool)), arguments: Arguments(arguments),
            output: .string(limit: 1 << 20), error: .string(limit: 1 << 20))
        return Outcome(status: status(result.terminationStatus), stdout: result.standardOutput, stderr: result.standardError)
    }

    /// Runs the daemon and reads its log; once a line contains `trigger`, sends `signal`.
    /// Returns the exit status and every log line. Waiting is on the output itself, never on time.
    static func run(
        _ arguments: [String], tool: String = "jukeboxd", until trigger: String, then signal: Signal
    ) async throws -> (status: Int32?, lines: [String], triggered: Bool) {
        let result = try await Subprocess.run(
            .path(.init(binaryDirectory + "/" + tool)), arguments: Arguments(arguments),
            input: .none, output: .discarded, error: .sequence
        ) { execution in
            var lines: [String] = []
            var triggered = false
            for try await line in execution.standardError.strings() {
                lines.append(line)
                if !triggered, line.contains(trigger) {
                    triggered = true
                    try execution.send(signal: signal)
                }
            }
            return (lines, triggered)
        }
        return (status(result.terminationStatus), result.closureResult.0, result.closureResult.1)
    }
}
