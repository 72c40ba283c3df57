import Foundation
import Glibc
import JukeboxCore
import JukeboxDuck
import JukeboxTestSupport
import Synchronization
import Testing

/// The players jukeboxd lowers, reached in their own protocols: Debian's MPD (over its socket
/// and its port, with and without a password), and players that answer garbage, without end,
/// or not at all, which must cost at most a second and never memory.
@Suite("MPD and snapserver as ducked players", .serialized, .timeLimit(.minutes(1)))
struct PlayerTargetTests {
    @Test(.enabled(if: MPDServer.isInstalled, Comment(rawValue: MPDServer.missing)))
    func mpdIsReadSetPausedAndPlayedOverItsSocketAndItsPort() async throws {
        let mpd = try MPDServer(device: nil)
        let tone = WAVFile.bytes(Array(repeating: 0.1, count: 44_100 * 30), encoding: .s16, rate: 44_100, channels: 1)
        _ = try mpd.folder.write("music/tone.wav", tone)
        try await mpd.run { _ in
            // In the database from MPD's first scan.
            _ = try await mpd.command(["add tone.wav", "setvol 80", "play"])
            for address in [DuckSettings.Address.unix(path: mpd.socket), .tcp(host: "127.0.0.1", port: mpd.port)] {
                let target = MPDTarget(address: address, passwordFile: nil)
                #expect(try await target.read() == DuckTargetState(volume: 80, playing: true))
                try await target.setVolume(12)
                #expect(try await mpd.status()["volume"] == "12")
                try await target.setPaused(true)
                #expect(try await target.read() == DuckTargetState(volume: 12, playing: false))
                try await target.setPaused(false)
                try await target.setVolume(80)
                #expect(try await mpd.status()["state"] == "play")
            }
        }
    }

    /// A ramp used to open a connection to MPD for each of its twenty steps a second; now
    /// every call goes over one connection, kept in MPD's `idle` between conversations and
    /// out of it for the whole of a held one. Debian's MPD takes them so, and a server that
    /// counts its connections sees one for the ramp and the calls after it.
    @Test(.enabled(if: MPDServer.isInstalled, Comment(rawValue: MPDServer.missing)))
    func aRampGoesToMPDOverOneConnection() async throws {
        let mpd = try MPDServer(device: nil)
        try await mpd.run { _ in
            _ = try await mpd.command(["setvol 80"])
            let target = MPDTarget(address: .tcp(host: "127.0.0.1", port: mpd.port), passwordFile: nil)
            let read = try await target.withConnection(for: .seconds(1)) { held in
                for level in [60, 40, 20] { try await held.setVolume(level) }
                return try await held.read()
            }
            #expect(read.volume == 20)
            #expect(try await mpd.status()["volume"] == "20")
        }
        let counting = CountingMPD()
        let target = MPDTarget(address: .tcp(host: "127.0.0.1", port: counting.port), passwordFile: nil)
        try await target.withConnection(for: .seconds(1)) { held in
            for level in [60, 40, 20] { try await held.setVolume(level) }
        }
        #expect(counting.connections == 1, "one connection for the held ramp: \(counting.lines)")
        #expect(counting.lines.prefix(3) == ["setvol 60", "setvol 40", "setvol 20"], "no idle between a held ramp's steps")
        for level in [60, 40] { try await target.setVolume(level) }
        #expect(counting.connections == 1, "the same connection for each call on its own")
        // (Each call's `idle` after it is sent as it ends; the server may not have read the last yet.)
        #expect(counting.lines.prefix(9) == ["setvol 60", "setvol 40", "setvol 20", "idle message", "noidle", "setvol 60", "idle message", "noidle", "setvol 40"])
        // A held connection ends with its time: a body that outlasts it is given up on.
        await #expect(throws: (any Error).self) {
            try await target.withConnection(for: .milliseconds(100)) { _ in try await Task.sleep(for: .seconds(5)) }
        }
        counting.stop()
    }

    @Test(.enabled(if: MPDServer.isInstalled, Comment(rawValue: MPDServer.missing)))
    func mpdWithAPasswordIsReachedWithItsPasswordFileAndRefusesWithoutIt() async throws {
        let mpd = try MPDServer(device: nil, password: "hunter2")
        let file = try mpd.folder.write("mpd.pass", text: "hunter2\n")
        try await mpd.run { _ in
            let target = MPDTarget(address: .unix(path: mpd.socket), passwordFile: file)
            try await target.setVolume(33)
            #expect(try await target.read().volume == 33)
            let refused = await #expect(throws: (any Error).self) { try await MPDTarget(address: .unix(path: mpd.socket), passwordFile: nil).read() }
            #expect("\(refused!)".contains("refused status"), "\(refused!)")
            let wrong = try mpd.folder.write("wrong.pass", text: "hunter3")
            let refusedPassword = await #expect(throws: (any Error).self) { try await MPDTarget(address: .unix(path: mpd.socket), passwordFile: wrong).read() }
            #expect("\(refusedPassword!)".contains("refused password"), "\(refusedPassword!)")
            let missing = await #expect(throws: (any Error).self) { try await MPDTarget(address: .unix(path: mpd.socket), passwordFile: mpd.folder.file("none")).read() }
            #expect("\(missing!)".contains("password file"), "\(missing!)")
        }
    }

    @Test(.enabled(if: Snapcast.isInstalled, Comment(rawValue: Snapcast.missing)))
    /// Two snapclients set in one batch, as a ramp's step sets them.
    func snapserverTakesTheBatch() async throws {
        let snapcast = try Snapcast(control: true)
        let port = try #require(snapcast.controlPort)
        try await snapcast.run(clients: ["den", "kitchen"]) { _, _ in
            let address = DuckSettings.Address.tcp(host: "127.0.0.1", port: port)
            let (den, kitchen) = (SnapclientTarget(server: address, client: "den"), SnapclientTarget(server: address, client: "kitchen"))
            async let one: Void = den.setVolume(23)
            async let two: Void = kitchen.setVolume(67)
            _ = try await (one, two)
            #expect(try await SnapclientTarget(server: address, client: "den").read().volume == 23)
            #expect(try await SnapclientTarget(server: address, client: "kitchen").read().volume == 67)
        }
    }

    @Test func aPlayerThatIsNotThereIsSaidSoAtOnce() async throws {
        let folder = try TemporaryDirectory()
        let started = ContinuousClock.now
        let missing = await #expect(throws: (any Error).self) { try await MPDTarget(address: .unix(path: folder.file("mpd.sock")), passwordFile: nil).read() }
        #expect("\(missing!)" == "its socket is not there: is it running?")
        let (listener, port) = Loopback.bound(listening: false)
        close(listener)
        let refused = await #expect(throws: (any Error).self) { try await MPDTarget(address: .tcp(host: "127.0.0.1", port: port), passwordFile: nil).read() }
        #expect("\(refused!)" == "refused the connection: is it running?")
        #expect(ContinuousClock.now - started < .seconds(1))
    }

    /// A server that accepts and says nothing, one that greets with garbage, one that sends a
    /// line without end, and one that never stops sending lines: each is given up on within
    /// about a second, having cost no more than its bounds.
    @Test(arguments: [Misbehaving.silent, .garbage, .endlessLine, .endlessLines])
    func aPlayerThatMisbehavesCostsASecondAtMost(_ behaviour: Misbehaving) async throws {
        let server = MisbehavingServer(behaviour)
        let started = ContinuousClock.now
        let mpd = await #expect(throws: (any Error).self) { try await MPDTarget(address: .tcp(host: "127.0.0.1", port: server.port), passwordFile: nil).read() }
        let snap = await #expect(throws: (any Error).self) { try await SnapclientTarget(server: .tcp(host: "127.0.0.1", port: server.port), client: "kitchen").read() }
        let took = ContinuousClock.now - started
        #expect(took < .seconds(3), "took \(took)")
        let expected: String = switch behaviour {
        case .silent: "did not answer within 1s"
        case .garbage: "is not"
        case .endlessLine: "sent a line longer than 16384 bytes"
        case .endlessLines: "more than"
        }
        #expect("\(mpd!)".contains(expected) || "\(mpd!)".contains("did not answer"), "\(mpd!)")
        #expect("\(snap!)".contains(expected) || "\(snap!)".contains("did not answer") || behaviour == .endlessLines, "\(snap!)")
        server.stop()
    }
}

enum Misbehaving: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case silent, garbage, endlessLine, endlessLines
    var testDescription: String { rawValue }
}

/// A loopback server that treats every connection the same bad way, on a thread of its own.
final class MisbehavingServer: Sendable {
    let port: Int
    private let listener: Int32

    init(_ behaviour: Misbehaving) {
        let (listener, port) = Loopback.bound(listening: true)
        self.listener = listener
        self.port = port
        Thread {
            while true {
                let peer = accept(listener, nil, nil)
                guard peer >= 0 else { return }
                Thread {
                    var written = 0
                    let chunk: [UInt8] = switch behaviour {
                    case .silent: []
                    case .garbage: Array("\u{1}\u{2}GARBAGE {{{\n".utf8)
                    case .endlessLine: Array(repeating: UInt8(ascii: "x"), count: 4096)
                    case .endlessLines: Array("OK MPD 0.23.0\nvolume: 1\n".utf8)
                    }
                    if behaviour == .endlessLines {
                        _ = chunk.prefix(14).withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
                    }
                    // Sends until the client goes (or 64 MB, a bound a client must stop long before).
                    while !chunk.isEmpty, written < 64 << 20 {
                        let count = chunk.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
                        if count <= 0 { break }
                        written += count
                        if behaviour == .garbage { break }
                    }
                    var byte: UInt8 = 0
                    while read(peer, &byte, 1) > 0 {}
                    close(peer)
                }.start()
            }
        }.start()
    }

    func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
}

/// MPD's greeting and `OK` to every command, on a thread of its own: counts the connections it
/// accepts and records the commands.
final class CountingMPD: Sendable {
    let port: Int
    private let listener: Int32
    private let state = Mutex<(connections: Int, lines: [String])>((0, []))

    var connections: Int { state.withLock { $0.connections } }
    var lines: [String] { state.withLock { $0.lines } }

    init() {
        let (listener, port) = Loopback.bound(listening: true)
        self.listener = listener
        self.port = port
        Thread { [self] in
            while true {
                let peer = accept(listener, nil, nil)
                guard peer >= 0 else { return }
                state.withLock { $0.connections += 1 }
                Thread {
                    func send(_ text: String) { _ = Array(text.utf8).withUnsafeBytes { write(peer, $0.baseAddress, $0.count) } }
                    send("OK MPD 0.23.0\n")
                    var line: [UInt8] = []
                    var byte: UInt8 = 0
                    while read(peer, &byte, 1) == 1 {
                        guard byte == UInt8(ascii: "\n") else { line.append(byte); continue }
                        let text = String(decoding: line, as: UTF8.self)
                        line = []
                        self.state.withLock { $0.lines.append(text) }
                        // As MPD: `idle` answers when something changes, or at `noidle`.
                        if text.hasPrefix("idle") { continue }
                        send(text == "status" ? "volume: 20\nstate: play\nOK\n" : "OK\n")
                    }
                    close(peer)
                }.start()
            }
        }.start()
    }

    func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
}
