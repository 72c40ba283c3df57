import Foundation
import Subprocess

/// A real Snapcast: snapserver with a `pipe://` source in a folder of the test's own, its
/// stream port on loopback (its JSON-RPC ports off), and snapclients that "play" into raw
/// files (`--player file`), each started and stopped by the test by its pid. CI installs
/// snapserver and snapclient.
public struct Snapcast: Sendable {
    public static var isInstalled: Bool {
        ["/usr/bin/snapserver", "/usr/bin/snapclient"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }
    public static let missing = "snapserver or snapclient is not installed (apt-get install snapserver snapclient): the Snapcast tests are skipped"
    /// The stream's format, and what the clients write: raw s16le stereo.
    public static let rate = 48_000

    public let folder: TemporaryDirectory
    public let port: Int
    /// snapserver's own buffer, which every client adds to the latency.
    public let buffer: Int
    public var pipe: String { folder.file("fifo") }

    public init(buffer: Int = 300) throws {
        folder = try TemporaryDirectory()
        port = Mosquitto.freePort()
        self.buffer = buffer
        try folder.write("snapserver.conf", text: """
            [server]
            threads = 2
            datadir = \(folder.path)
            [http]
            enabled = false
            [tcp]
            enabled = false
            [stream]
            bind_to_address = 127.0.0.1
            port = \(port)
            source = pipe://\(pipe)?name=jukeboxd&mode=create&sampleformat=48000:16:2&codec=pcm&chunk_ms=20
            buffer = \(buffer)
            [logging]
            sink = stderr
            """)
    }

    /// The raw output of the client with this host id.
    public func output(_ client: String) -> String { folder.file("\(client).raw") }

    public func outputBytes(_ client: String) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: output(client))))) ?? []
    }

    /// A process of the rig: snapserver or a snapclient.
    public actor Process {
        let executable: String
        let arguments: [String]
        let ready: String
        private var task: Task<Void, Never>?
        private var pid: pid_t?
        public let log = LogLines()
        /// The line the log gets when the process has ended.
        static let exited = "[the process ended]"

        init(_ executable: String, _ arguments: [String], ready: String) {
            self.executable = executable
            self.arguments = arguments
            self.ready = ready
        }

        /// Starts it (again) and returns once its log says it is ready.
        public func start() async throws {
            let log = self.log
            let before = await log.lines.count
            let (started, signal) = AsyncStream.makeStream(of: Optional<pid_t>.self)
            task = Task { [executable, arguments] in
                _ = try? await Subprocess.run(.path(.init(executable)), arguments: Arguments(arguments), input: .none, output: .discarded, error: .sequence) { execution in
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
            _ = await log.waitUntil { $0.dropFirst(before).contains { $0.contains(ready) || $0 == Self.exited } }
            guard await log.lines.dropFirst(before).contains(where: { $0.contains(ready) }) else {
                throw Failed(program: executable, lines: await log.lines)
            }
        }

        /// Ends it by its pid (SIGTERM, or SIGKILL for a crash) and waits until it has gone.
        public func stop(signal: Int32 = SIGTERM) async {
            if let pid { kill(pid, signal) }
            await task?.value
            pid = nil
            task = nil
        }
    }

    public func server() -> Process {
        Process("/usr/bin/snapserver", ["-c", folder.file("snapserver.conf")], ready: "Creating stream acceptor")
    }

    /// A client that plays into `output(hostID)`, appended to (a client that reconnects starts
    /// its player again, which would otherwise empty the file).
    public func client(_ hostID: String) -> Process {
        Process("/usr/bin/snapclient", ["-h", "127.0.0.1", "-p", "\(port)", "--hostID", hostID, "--logsink", "stderr",
                                        "--player", "file:filename=\(output(hostID)),mode=a"], ready: "Sampleformat:")
    }

    /// Runs snapserver and `clients` while `body` runs, and stops them all after.
    public func run<T: Sendable>(clients: [String], _ body: @Sendable (Process, [Process]) async throws -> T) async throws -> T {
        let server = server()
        let players = clients.map(client)
        try await server.start()
        do {
            for player in players { try await player.start() }
            let value = try await body(server, players)
            for player in players { await player.stop() }
            await server.stop()
            return value
        } catch {
            for player in players { await player.stop() }
            await server.stop()
            throw error
        }
    }

    struct Failed: Error, CustomStringConvertible {
        var program: String
        var lines: [String]
        var description: String { "\(program) did not start:\n" + lines.joined(separator: "\n") }
    }
}
