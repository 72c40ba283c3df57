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

    /// snapserver's JSON-RPC control port on loopback, when it was asked for.
    public let controlPort: Int?
    /// The second stream's pipe ("music"), when it was asked for.
    public var musicPipe: String { folder.file("music-fifo") }

    /// `control`: snapserver's JSON-RPC control port on, and a second stream, "music", for
    /// clients that play something else.
    public init(buffer: Int = 300, control: Bool = false) throws {
        folder = try TemporaryDirectory()
        port = Mosquitto.freePort()
        controlPort = control ? Mosquitto.freePort() : nil
        self.buffer = buffer
        let tcp = controlPort.map { "enabled = true\nbind_to_address = 127.0.0.1\nport = \($0)" } ?? "enabled = false"
        let music = control ? "\nsource = pipe://\(musicPipe)?name=music&mode=create&sampleformat=48000:16:2&codec=pcm&chunk_ms=20" : ""
        try folder.write("snapserver.conf", text: """
            [server]
            threads = 2
            datadir = \(folder.path)
            [http]
            enabled = false
            [tcp]
            \(tcp)
            [stream]
            bind_to_address = 127.0.0.1
            port = \(port)
            source = pipe://\(pipe)?name=jukeboxd&mode=create&sampleformat=48000:16:2&codec=pcm&chunk_ms=20\(music)
            buffer = \(buffer)
            [logging]
            sink = stderr
            """)
    }

    /// Sends one JSON-RPC request line to the control port and returns the answer's line (the
    /// first with an `"id"`; notifications on the way are skipped).
    public func control(_ request: String) async throws -> String {
        guard let controlPort else { throw ControlFailed(description: "snapserver has no control port") }
        return try await Loopback.offThePool { Result { try Self.exchange(port: controlPort, request) } }.get()
    }

    private static func exchange(port: Int, _ request: String) throws -> String {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = Loopback.address(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw ControlFailed(description: "cannot connect to snapserver's control port") }
        let bytes = Array((request + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeFirst(end + 1)
                if line.contains(#""id""#) { return line }
            }
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { throw ControlFailed(description: "snapserver closed the control connection") }
            pending += chunk.prefix(count)
        }
    }

    /// The raw output of the client with this host id.
    public func output(_ client: String) -> String { folder.file("\(client).raw") }

    public func outputBytes(_ client: String) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: output(client))))) ?? []
    }

    /// A process of the rig: snapserver or a snapclient.
    public typealias Process = ServerProcess

    public func server() -> Process {
        Process("/usr/bin/snapserver", ["-c", folder.file("snapserver.conf")]) { $0.contains("Creating stream acceptor") }
    }

    /// A client that plays into `output(hostID)`, appended to (a client that reconnects starts
    /// its player again, which would otherwise empty the file).
    public func client(_ hostID: String) -> Process {
        Process("/usr/bin/snapclient", ["-h", "127.0.0.1", "-p", "\(port)", "--hostID", hostID, "--logsink", "stderr",
                                        "--player", "file:filename=\(output(hostID)),mode=a"]) { $0.contains("Sampleformat:") }
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

    struct ControlFailed: Error, CustomStringConvertible {
        var description: String
    }
}
