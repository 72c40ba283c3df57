import Foundation
import JukeboxTestSupport
import Subprocess

/// A throwaway local user for tests that need a second one (another user squatting a socket,
/// planting files): made with `useradd`, removed with `userdel` by `remove()`. Needs root;
/// `isPossible` says whether this run can.
struct UnixUser {
    let name: String
    let uid: UInt32
    let gid: UInt32

    static var isPossible: Bool { geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd") }
    static let impossible = "needs root and useradd to create a second user: skipped"

    static func create() async throws -> UnixUser {
        let name = "jbt\(UInt32.random(in: 10_000_000...99_999_999))"
        let made = try await Subprocess.run(.path("/usr/sbin/useradd"), arguments: ["--no-create-home", "--shell", "/usr/sbin/nologin", name],
                                            platformOptions: TestProcesses.options, output: .discarded, error: .string(limit: 4096))
        guard case .exited(0) = made.terminationStatus, let entry = getpwnam(name) else {
            throw RigFailed(description: "useradd \(name): \(made.standardError)")
        }
        return UnixUser(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    func remove() async {
        _ = try? await Subprocess.run(.path("/usr/sbin/userdel"), arguments: [name], platformOptions: TestProcesses.options, output: .discarded, error: .discarded)
    }

    /// `arguments` run as this user, with no supplementary groups.
    func command(_ arguments: [String]) -> (Executable, Arguments) {
        (.path("/usr/bin/setpriv"), Arguments(["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--"] + arguments))
    }

    /// Runs jukeboxd (`arguments`) as this user until its control socket listens, then
    /// `body`, then stops it with SIGTERM.
    func withDaemon<T: Sendable>(_ arguments: [String], _ body: @Sendable () async throws -> T) async throws -> T {
        let (executable, arguments) = command(arguments)
        let log = LogLines()
        let result = try await Subprocess.run(executable, arguments: arguments, platformOptions: TestProcesses.options, input: .none, output: .discarded, error: .sequence) { execution in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await line in execution.standardError.strings() { await log.append(line) }
                    await log.finish()
                }
                guard await log.waitFor("control socket listening") else { return T?.none }
                let value = try await body()
                try execution.send(signal: .terminate)
                try await group.waitForAll()
                return value
            }
        }
        guard let value = result.closureResult else { throw DaemonExited(lines: await log.lines) }
        return value
    }

    func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> DaemonProcess.Outcome {
        let (executable, arguments) = command(arguments)
        let result = try await Subprocess.run(executable, arguments: arguments, environment: .custom(Dictionary(uniqueKeysWithValues: (["PATH": "/usr/bin:/bin"].merging(environment) { $1 }).map { (Environment.Key(stringLiteral: $0.key), $0.value) })),
                                              platformOptions: TestProcesses.options, output: .string(limit: 1 << 16), error: .string(limit: 1 << 16))
        return DaemonProcess.Outcome(status: DaemonProcess.status(result.terminationStatus), stdout: result.standardOutput, stderr: result.standardError)
    }
}

/// Runs `body` with two fresh users, and always removes them.
func withUsers<T>(_ count: Int, _ body: ([UnixUser]) async throws -> T) async throws -> T {
    var users: [UnixUser] = []
    do {
        for _ in 0..<count { users.append(try await UnixUser.create()) }
        let value = try await body(users)
        for user in users { await user.remove() }
        return value
    } catch {
        for user in users { await user.remove() }
        throw error
    }
}
