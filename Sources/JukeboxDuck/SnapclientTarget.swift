import JukeboxDuckTarget
import JukeboxProtocol
import Synchronization

/// A snapclient, lowered through snapserver's JSON-RPC control port
/// (https://github.com/badaix/snapcast/blob/develop/doc/json_rpc_api/control.md): found by
/// its id or name in `Server.GetStatus`, set with `Client.SetVolume`. Pausing mutes it (a
/// client has no pause of its own). Notifications snapserver sends meanwhile are skipped.
///
/// One is made for each ramp: it finds its client once, and each step after that is one
/// `Client.SetVolume`, sent in one batch with the other clients' on the same server
/// (`SnapserverBatch`).
public final class SnapclientTarget: DuckTarget {
    let server: PlayerAddress
    let client: String
    /// The client as this ramp first found it: its id, and whether it was muted.
    private let found = Mutex<Found?>(nil)

    public init(server: PlayerAddress, client: String) {
        self.server = server
        self.client = client
    }

    public func read() async throws -> DuckTargetState {
        let found = try await find()
        self.found.withLock { $0 = found }
        return DuckTargetState(volume: found.percent, playing: found.connected && !found.muted)
    }

    public func setVolume(_ percent: Int) async throws {
        let known = self.found.withLock { $0 }
        let found: Found
        if let known {
            found = known
        } else {
            found = try await find()
            self.found.withLock { $0 = found }
        }
        try await setVolume(id: found.id, percent: min(max(percent, 0), 100), muted: found.muted)
    }

    public func setPaused(_ paused: Bool) async throws {
        let found = try await find()
        try await setVolume(id: found.id, percent: found.percent, muted: paused)
    }

    private struct Found: Sendable {
        var id: String
        var percent: Int
        var muted: Bool
        var connected: Bool
    }

    /// The client in the server's status, by id, then by its name, then by its host's name.
    private func find() async throws -> Found {
        let result = try await call("Server.GetStatus", params: nil)
        guard case .object(let status)? = result.object?["server"], case .array(let groups)? = status["groups"] else {
            throw PlayerProblem("answered Server.GetStatus without its groups")
        }
        var clients: [[String: JSONValue]] = []
        for case .object(let group) in groups {
            guard case .array(let members)? = group["clients"] else { continue }
            for case .object(let member) in members { clients.append(member) }
        }
        func name(_ member: [String: JSONValue]) -> [String?] {
            [member["id"]?.string, member["config"]?.object?["name"]?.string, member["host"]?.object?["name"]?.string]
        }
        for index in 0..<3 {
            guard let member = clients.first(where: { name($0)[index] == client }), let id = member["id"]?.string else { continue }
            let volume = member["config"]?.object?["volume"]?.object
            guard case .number(let percent)? = volume?["percent"], percent.isFinite, (0...100).contains(percent) else {
                throw PlayerProblem("gave no volume for snapclient \(client)")
            }
            let muted = volume?["muted"] == .bool(true)
            return Found(id: id, percent: Int(percent), muted: muted, connected: member["connected"] != .bool(false))
        }
        throw PlayerProblem("has no snapclient with the id or name \"\(client.prefix(100))\"")
    }

    private func setVolume(id: String, percent: Int, muted: Bool) async throws {
        let volume = JSONValue.object(["muted": .bool(muted), "percent": .number(Double(percent))])
        _ = try await call("Client.SetVolume", params: .object(["id": .string(id), "volume": volume]))
    }

    /// One request, and its result, with whatever else is asked of this server meanwhile.
    private func call(_ method: String, params: JSONValue?) async throws -> JSONValue {
        try await SnapserverBatch.to(server).call(method, params: params)
    }
}

extension JSONValue {
    fileprivate var string: String? { if case .string(let text) = self { text } else { nil } }
    fileprivate var object: [String: JSONValue]? { if case .object(let fields) = self { fields } else { nil } }
}
