import Foundation
import Subprocess

/// A server a test starts and stops by its pid (mosquitto, snapserver, a snapclient, MPD): its
/// standard error collected in `log`, ready once a line of it says so.
public actor ServerProcess {
    let executable: String
    let arguments: [String]
    let environment: [String: String]
    let ready: @Sendable (String) -> Bool
    private var task: Task<Void, Never>?
    private var pid: pid_t?
    public let log = LogLines()
    /// The line the log gets when the process has ended.
    static let exited = "[the process ended]"

    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], ready: @escaping @Sendable (String) -> Bool) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.ready = ready
    }

    /// Starts it (again) and returns once its log says it is ready; throws with its log when
    /// it ends first.
    public func start() async throws {
        let log = self.log
        let before = await log.lines.count
        let (started, signal) = AsyncStream.makeStream(of: Optional<pid_t>.self)
        let environment = Environment.inherit.updating(Dictionary(uniqueKeysWithValues: environment.map { (Environment.Key(stringLiteral: $0.key), Optional($0.value)) }))
        task = Task { [executable, arguments] in
            _ = try? await Subprocess.run(
                .path(.init(executable)), arguments: Arguments(arguments), environment: environment, platformOptions: TestProcesses.options, input: .none, output: .discarded, error: .sequence
            ) { execution in
                signal.yield(execution.processIdentifier.value)
                for try await line in execution.standardError.strings() { await log.append(line) }
            }
            signal.yield(nil)
            await log.append(Self.exited)
        }
        for await pid in started {
            self.pid = pid
            break
        }
        let ready = ready
        _ = await log.waitUntil { $0.dropFirst(before).contains { ready($0) || $0 == Self.exited } }
        guard await log.lines.dropFirst(before).contains(where: ready) else {
            throw Failed(program: executable, lines: await log.lines)
        }
    }

    /// Starts it, runs `body`, and stops it again whatever `body` does.
    public func whileRunning<T: Sendable>(_ body: @Sendable (ServerProcess) async throws -> T) async throws -> T {
        try await start()
        do {
            let value = try await body(self)
            await stop()
            return value
        } catch {
            await stop()
            throw error
        }
    }

    /// Ends it by its pid (SIGTERM, or SIGKILL for a crash) and waits until it has gone.
    public func stop(signal: Int32 = SIGTERM) async {
        if let pid { kill(pid, signal) }
        await task?.value
        pid = nil
        task = nil
    }

    struct Failed: Error, CustomStringConvertible {
        var program: String
        var lines: [String]
        var description: String { "\(program) did not start:\n" + lines.suffix(40).joined(separator: "\n") }
    }
}
