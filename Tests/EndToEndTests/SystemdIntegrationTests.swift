import Foundation
import JukeboxCore
import JukeboxProtocol
import Synchronization
import JukeboxTestSupport
import Testing

/// What systemd sees: priority prefixes for journald and notifications on $NOTIFY_SOCKET.
@Suite("systemd integration", .timeLimit(.minutes(1)))
struct SystemdIntegrationTests {
    let folder: TemporaryDirectory
    let session: String

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("a.wav", WAVFile.bytes(Array(repeating: 0.1, count: 800), encoding: .s16, rate: 8000, channels: 1))
        session = try folder.write("s.json", text: #"{ "name": "Short", "interval": { "min": "1h", "max": "1h" }, "duration": "1s", "clips": [ { "file": "a.wav" }, { "file": "gone.wav" } ] }"#)
    }

    var arguments: [String] {
        [session, "--socket", folder.file("c.sock"), "--state", folder.file("state.json"), "--device", "file:FILE=\(folder.file("o.raw")),FORMAT=raw"]
    }

    @Test func underJournaldEachLineCarriesItsPriority() async throws {
        let outcome = try await DaemonProcess.run(arguments, environment: ["JOURNAL_STREAM": "8:12345"])
        #expect(outcome.status == 0)
        let lines = outcome.stderr.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.hasPrefix("<") }, "\(lines)")
        #expect(lines.contains("<4>clip gone left out: gone.wav: no such file (looked for \(folder.file("gone.wav")))"))
        #expect(lines.contains { $0.hasPrefix("<6>jukeboxd \(JukeboxVersion.current), session \"Short\": 1 clip,") })
        #expect(lines.contains("<5>session \"Short\" reached its duration of 1s; finishing the current clip"))
    }

    @Test func withoutJournaldLinesAreReadable() async throws {
        let outcome = try await DaemonProcess.run(arguments, environment: ["JOURNAL_STREAM": ""])
        let warning = outcome.stderr.split(separator: "\n").first { $0.contains("gone left out") }
        #expect(warning?.contains(" warning clip gone left out: gone.wav") == true, "\(outcome.stderr)")
        #expect(warning?.hasPrefix("<") == false)
    }

    @Test func notifiesReadyWatchdogAndStopping() async throws {
        let socketPath = folder.file("notify.sock")
        let receiver = try DatagramReceiver(path: socketPath)
        let outcome = try await DaemonProcess.run(arguments, environment: ["NOTIFY_SOCKET": socketPath, "WATCHDOG_USEC": "200000"])
        #expect(outcome.status == 0)
        let messages = await receiver.drain()
        #expect(messages.first == "READY=1\nSTATUS=playing \"Short\"", "\(messages)")
        #expect(messages.filter { $0 == "WATCHDOG=1" }.count >= 3, "pings every 100 ms over a 1 s session: \(messages)")
        #expect(messages.last == "STOPPING=1")
    }
}

/// A datagram socket standing in for systemd's notification socket; like systemd it reads
/// continuously, on its own thread, which is the only reader so the order is kept.
final class DatagramReceiver: Sendable {
    private struct State {
        var received: [String] = []
        var stopping = false
        var finished = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    let descriptor: Int32
    private let state = Mutex(State())

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = UnixSocketAddress(path)!
        guard address.withSockaddr({ bind(descriptor, $0, $1) }) == 0 else { throw POSIXError(.EADDRINUSE) }
        var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            // Keep reading until asked to stop and the socket has nothing left.
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    state.withLock { $0.received.append(String(decoding: buffer[..<count], as: UTF8.self)) }
                } else if state.withLock({ $0.stopping }) {
                    break
                }
            }
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.finished = true
                return state.waiter
            }
            waiter?.resume()
        }.start()
    }

    deinit { close(descriptor) }

    /// Every datagram received, once the reader has emptied the socket and stopped.
    func drain() async -> [String] {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                state.stopping = true
                if !state.finished { state.waiter = continuation }
                return state.finished
            }
            if done { continuation.resume() }
        }
        return state.withLock { $0.received }
    }
}
