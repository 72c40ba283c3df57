import Subprocess

/// A program from the machine (ffmpeg, curl), run with an argument list.
public enum Tool {
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs `program` (found on PATH) with `arguments`, standard input empty.
    public static func run(_ program: String, _ arguments: [String]) async throws -> Output {
        let result = try await Subprocess.run(
            .name(program), arguments: Arguments(arguments), input: .none,
            output: .string(limit: 1 << 20), error: .string(limit: 1 << 20))
        let status: Int32 = switch result.terminationStatus {
        case .exited(let code): Int32(code)
        case .signaled(let signal): 128 + Int32(signal)
        }
        return Output(status: status, stdout: result.standardOutput, stderr: result.standardError)
    }
}
