import Foundation
import Glibc
import JukeboxCore
import JukeboxDuck
import JukeboxTestSupport
import Synchronization
import Testing

/// Two snapclients on one snapserver, lowered together: one `Server.GetStatus` finds both,
/// and each step of the ramp after that is one connection with a batch of their
/// `Client.SetVolume`s. (That snapserver itself takes the batch is PlayerTargetTests'.)
@Suite("Snapclients lowered in batches", .serialized, .timeLimit(.minutes(1)))
struct SnapserverBatchTests {
    @Test func twoClientsOnOneServerAreFoundOnceAndSetInOneBatch() async throws {
        let server = RecordingSnapserver(clients: ["kitchen": 70, "den": 40])
        let address = DuckSettings.Address.tcp(host: "127.0.0.1", port: server.port)
        let (kitchen, den) = (SnapclientTarget(server: address, client: "kitchen"), SnapclientTarget(server: address, client: "den"))
        async let first = kitchen.read()
        async let second = den.read()
        #expect(try await (first.volume, second.volume) == (70, 40))
        #expect(server.lines == [#"{"id":1,"jsonrpc":"2.0","method":"Server.GetStatus"}"#], "one request, asked for by both: \(server.lines)")
        for step in [50, 30] {
            async let one: Void = kitchen.setVolume(step)
            async let two: Void = den.setVolume(step / 2)
            _ = try await (one, two)
        }
        let sets = server.lines.dropFirst()
        #expect(sets.count == 2, "a connection per step: \(sets)")
        #expect(sets.allSatisfy { $0.hasPrefix("[") && $0.components(separatedBy: "Client.SetVolume").count == 3 }, "\(sets)")
        #expect(server.volumes == ["kitchen": 30, "den": 15])
        server.stop()
    }
}

/// A snapserver's control port as far as ducking uses it, on a thread of its own: it keeps
/// each client's volume, answers requests alone or in a batch, and records every line.
final class RecordingSnapserver: Sendable {
    let port: Int
    private let listener: Int32
    private let state: Mutex<(lines: [String], volumes: [String: Int])>

    var lines: [String] { state.withLock { $0.lines } }
    var volumes: [String: Int] { state.withLock { $0.volumes } }

    init(clients: [String: Int]) {
        let (listener, port) = Loopback.bound(listening: true)
        self.listener = listener
        self.port = port
        state = Mutex(([], clients))
        Thread { [self] in
            while true {
                let peer = accept(listener, nil, nil)
                guard peer >= 0 else { return }
                var line: [UInt8] = []
                var byte: UInt8 = 0
                while read(peer, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
                let text = String(decoding: line, as: UTF8.self)
                let answer = self.answer(text) + "\n"
                _ = answer.utf8CString.withUnsafeBufferPointer { write(peer, $0.baseAddress, $0.count - 1) }
                close(peer)
            }
        }.start()
    }

    private func answer(_ text: String) -> String {
        state.withLock { $0.lines.append(text) }
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else { return "{}" }
        let requests = (parsed as? [[String: Any]]) ?? [(parsed as? [String: Any]) ?? [:]]
        let replies: [[String: Any]] = requests.map { request in
            let id = request["id"] ?? 0
            switch request["method"] as? String {
            case "Server.GetStatus":
                let clients = state.withLock { $0.volumes }.sorted { $0.key < $1.key }.map { name, percent in
                    ["id": name, "connected": true, "config": ["name": name, "volume": ["muted": false, "percent": percent]]] as [String: Any]
                }
                return ["id": id, "jsonrpc": "2.0", "result": ["server": ["groups": [["clients": clients]]]]]
            case "Client.SetVolume":
                let params = request["params"] as? [String: Any] ?? [:]
                let client = params["id"] as? String ?? ""
                let percent = (params["volume"] as? [String: Any])?["percent"] as? Int ?? -1
                state.withLock { $0.volumes[client] = percent }
                return ["id": id, "jsonrpc": "2.0", "result": ["volume": ["muted": false, "percent": percent]]]
            default:
                return ["id": id, "jsonrpc": "2.0", "error": ["code": -32601, "message": "Method not found"]]
            }
        }
        let reply: Any = parsed is [Any] ? replies : replies[0]
        return String(decoding: (try? JSONSerialization.data(withJSONObject: reply)) ?? Data("{}".utf8), as: UTF8.self)
    }

    func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
}
