import Foundation
import Glibc
import Subprocess

/// Debian's MPD, in a folder of the test's own: its music, database and state there, a Unix
/// socket and a loopback port, started and stopped by the test (by its pid). It plays through
/// ALSA's `pulse` PCM to a test's PulseAudio rig (`environment`), or to MPD's null output,
/// with MPD's software mixer so that its volume can be set. CI installs the `mpd` package.
public struct MPDServer: Sendable {
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/mpd") }
    public static let missing = "MPD is not installed (apt-get install mpd): the tests that duck MPD are skipped"

    public let folder: TemporaryDirectory
    public let port: Int
    public var socket: String { folder.file("mpd.sock") }
    public var music: String { folder.file("music") }

    /// `device`: an ALSA PCM (`pulse`), or nil for MPD's null output. `password`: MPD then
    /// lets only a client that gives it do anything. `fifo`: MPD plays into that FIFO
    /// instead (its `fifo` output, CD audio), as it feeds a music bed.
    public init(device: String?, password: String? = nil, fifo: String? = nil) throws {
        folder = try TemporaryDirectory()
        port = Loopback.serverPort()
        try FileManager.default.createDirectory(atPath: folder.file("music"), withIntermediateDirectories: true)
        let output = fifo.map { """
            audio_output {
                type "fifo"
                name "bed"
                path "\($0)"
                format "44100:16:2"
                mixer_type "software"
            }
            """ } ?? device.map { """
            audio_output {
                type "alsa"
                name "rig"
                device "\($0)"
                mixer_type "software"
                buffer_time "100000"
            }
            """ } ?? """
            audio_output {
                type "null"
                name "null"
                mixer_type "software"
            }
            """
        var config = """
            music_directory "\(music)"
            playlist_directory "\(folder.path)"
            db_file "\(folder.file("mpd.db"))"
            state_file "\(folder.file("mpd.state"))"
            bind_to_address "\(socket)"
            bind_to_address "127.0.0.1"
            port "\(port)"
            auto_update "no"
            zeroconf_enabled "no"
            \(output)

            """
        if getuid() == 0 { config += "user \"root\"\n" }
        if let password { config += "password \"\(password)@read,add,control,admin\"\ndefault_permissions \"\"\n" }
        _ = try folder.write("mpd.conf", text: config)
    }

    /// Runs MPD while `body` runs. With no database yet, MPD scans its music folder once it
    /// listens; it is ready when that scan has finished, so what the folder held at the start
    /// is in the database (a file added later needs `update`, then `idle database`).
    public func run<T: Sendable>(environment: [String: String] = [:], _ body: @Sendable (ServerProcess) async throws -> T) async throws -> T {
        try await ServerProcess("/usr/bin/mpd", ["--no-daemon", "--stderr", "--verbose", folder.file("mpd.conf")], environment: environment) {
            $0.contains("update: finished")
        }.whileRunning(body)
    }

    /// Sends MPD's commands over its socket (after `password`, if given) and returns the
    /// answer's lines, up to the last `OK`; an `ACK` throws.
    public func command(_ commands: [String], password: String? = nil) async throws -> [String] {
        let lines = (password.map { ["password \($0)"] } ?? []) + commands
        let socket = socket
        return try await Loopback.offThePool { Result { try Self.exchange(socket, lines) } }.get()
    }

    /// MPD's volume once `condition` holds of it (asked every 20 ms, for up to 20 s); nil if it
    /// never does.
    public func volume(until condition: (Int) -> Bool) async throws -> Int? {
        for _ in 0..<1000 {
            if let volume = try await status()["volume"].flatMap(Int.init), condition(volume) { return volume }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// Plays `seconds` of a 200 Hz tone from its music folder, at `volume`.
    public func playTone(seconds: Int, volume: Int) async throws {
        let tone = WAVFile.tone(frequency: 200, frames: 44_100 * seconds, rate: 44_100, channels: 2)
        _ = try folder.write("music/tone.wav", WAVFile.bytes(tone, encoding: .s16, rate: 44_100, channels: 2))
        _ = try await command(["update", "idle database"])
        _ = try await command(["add tone.wav", "play", "setvol \(volume)"])
    }

    /// `status` as key → value.
    public func status(password: String? = nil) async throws -> [String: String] {
        var fields: [String: String] = [:]
        for line in try await command(["status"], password: password) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = String(line[line.index(colon, offsetBy: 2)...])
        }
        return fields
    }

    private static func exchange(_ path: String, _ commands: [String]) throws -> [String] {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw MPDFailed(lines: ["no socket"]) }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw MPDFailed(lines: ["cannot connect to \(path)"]) }
        var pending: [UInt8] = []
        func line() throws -> String {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while !pending.contains(UInt8(ascii: "\n")) {
                let count = read(descriptor, &chunk, chunk.count)
                guard count > 0 else { throw MPDFailed(lines: ["MPD closed the connection"]) }
                pending += chunk.prefix(count)
            }
            let end = pending.firstIndex(of: UInt8(ascii: "\n"))!
            defer { pending.removeFirst(end + 1) }
            return String(decoding: pending[..<end], as: UTF8.self)
        }
        _ = try line()
        var answer: [String] = []
        for command in commands {
            let request = Array((command + "\n").utf8)
            guard request.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == request.count else { throw MPDFailed(lines: ["write failed"]) }
            while true {
                let reply = try line()
                if reply == "OK" { break }
                if reply.hasPrefix("ACK") { throw MPDFailed(lines: [reply]) }
                answer.append(reply)
            }
        }
        return answer
    }
}

public struct MPDFailed: Error, CustomStringConvertible {
    public var lines: [String]
    public var description: String { "MPD: " + lines.suffix(20).joined(separator: "\n") }
}
