import Foundation
import JukeboxTestSupport
import Testing

/// `kill -9` at random moments: every enqueue a client was told succeeded is still queued,
/// in the same order, after a restart.
@Suite("Crash recovery", .timeLimit(.minutes(1)))
struct CrashRecoveryTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }

    init() throws {
        folder = try TemporaryDirectory()
        for id in ["a", "b", "c"] {
            try folder.write("\(id).wav", WAVFile.bytes(Array(repeating: 0.2, count: 800), encoding: .s16, rate: 8000, channels: 1))
        }
        try folder.write("s.json", text: #"{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" }, { "file": "b.wav" }, { "file": "c.wav" } ] }"#)
    }

    var arguments: [String] {
        [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "file:FILE=\(folder.file("o.raw")),FORMAT=raw"]
    }

    func waitingTickets() async throws -> [UInt64] {
        let queue = try await jukebox("--json", "queue")
        let result = try JSONSerialization.jsonObject(with: Data(queue.stdout.utf8)) as? [String: Any]
        return (result?["waiting"] as? [[String: Any]] ?? []).compactMap { ($0["ticket"] as? NSNumber)?.uint64Value }
    }

    @Test func acknowledgedEnqueuesSurviveKill9() async throws {
        var acknowledged: [UInt64] = []
        var generator = SystemRandomNumberGenerator()
        for round in 0..<5 {
            let target = Int.random(in: 1...6, using: &generator)
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", stopWith: .kill) { [self] _ in
                if round == 0 { _ = try await jukebox("pause") }
                let acks = Acks()
                // Enqueue from the side until killed; the kill lands while requests are in flight.
                let enqueuer = Task {
                    while !Task.isCancelled {
                        let outcome = try await jukebox("--json", "play", ["a", "b", "c"].randomElement()!)
                        guard outcome.status == 0, let range = outcome.stdout.range(of: #""ticket":"#) else { return }
                        await acks.add(UInt64(outcome.stdout[range.upperBound...].prefix { $0.isNumber })!)
                    }
                }
                await acks.waitFor(count: target)
                return (enqueuer, await acks.tickets)
            }
            #expect(run.status == nil, "killed by SIGKILL")
            run.result.0.cancel()
            _ = try? await run.result.0.value
            let restarted = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { _ in
                try await waitingTickets()
            }
            let waiting = restarted.result
            let acked = acknowledged + run.result.1
            // Everything acknowledged is there, in order; at most the request in flight at the
            // moment of the kill may also have made it.
            #expect(Array(waiting.prefix(acked.count)) == acked, "round \(round): acknowledged \(acked), found \(waiting)")
            #expect(waiting.count <= acked.count + 1)
            acknowledged = waiting
            // "1 queued clip", "2 queued clips"
            let restored = "restored \(waiting.count) queued clip\(waiting.count == 1 ? "" : "s"), paused"
            #expect(restarted.lines.contains { $0.contains(restored) }, "\(restarted.lines)")
        }
    }

    @Test func corruptStateIsKeptAsideAndTheDaemonStartsEmpty() async throws {
        try folder.write("state.json", text: "garbage")
        let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [self] _ in
            try await waitingTickets()
        }
        #expect(run.result == [])
        #expect(run.lines.contains { $0.contains("state file \(folder.file("state.json")) could not be used (not a valid state file); kept it as \(folder.file("state.json")).corrupt-") })
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("state.json.corrupt-") }
        #expect(kept.count == 1)
    }
}

/// Tickets a client was told about, in order.
actor Acks {
    private(set) var tickets: [UInt64] = []
    private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []

    func add(_ ticket: UInt64) {
        tickets.append(ticket)
        let ready = waiters.filter { $0.0 <= tickets.count }
        waiters.removeAll { $0.0 <= tickets.count }
        ready.forEach { $0.1.resume() }
    }

    func waitFor(count: Int) async {
        if tickets.count >= count { return }
        await withCheckedContinuation { waiters.append((count, $0)) }
    }
}
