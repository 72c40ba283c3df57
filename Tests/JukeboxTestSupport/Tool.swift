import Foundation
import Subprocess

/// A program from the machine (openssl, curl), run with an argument list.
public enum Tool {
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs `program` (a path, or a name found on PATH, else in /usr/bin) with `arguments`,
    /// standard input empty; its outputs as the other tests collect them, as bytes.
    public static func run(_ program: String, _ arguments: [String]) async throws -> Output {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin"]
        let path = program.hasPrefix("/") ? program
            : folders.map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/\(program)"
        let result = try await Subprocess.run(
            .path(.init(path)), arguments: Arguments(arguments), platformOptions: TestProcesses.options, input: .none,
            output: .bytes(limit: 1 << 20), error: .bytes(limit: 1 << 20))
        let status: Int32 = switch result.terminationStatus {
        case .exited(let code): Int32(code)
        case .signaled(let signal): 128 + Int32(signal)
        }
        return Output(status: status, stdout: String(decoding: result.standardOutput, as: UTF8.self), stderr: String(decoding: result.standardError, as: UTF8.self))
    }
}
