import JukeboxDuckTarget
import JukeboxProtocol
import Synchronization

/// The requests made to one snapserver at the same moment go together: the steps of a ramp
/// that lowers several of its clients, sent as one JSON-RPC batch on one connection, and one
/// `Server.GetStatus` for all who ask for it then.
actor SnapserverBatch {
    let server: PlayerAddress
    private var waiting: [Request] = []
    private var scheduled = false

    private struct Request {
        var method: String
        var params: JSONValue?
        var reply: CheckedContinuation<JSONValue, any Error>
    }

    /// How long a request waits for others to go with it: a ramp's players step together, so
    /// theirs come within a millisecond or two.
    static let gather: Duration = .milliseconds(5)

    /// One per server, for the daemon's life: as many as the sessions it has read named.
    private static let all = Mutex<[PlayerAddress: SnapserverBatch]>([:])

    static func to(_ server: PlayerAddress) -> SnapserverBatch {
        all.withLock { all in
            if let batch = all[server] { return batch }
            let batch = SnapserverBatch(server: server)
            all[server] = batch
            return batch
        }
    }

    init(server: PlayerAddress) { self.server = server }

    /// `method`'s result, sent with whatever else is asked of this server meanwhile.
    func call(_ method: String, params: JSONValue?) async throws -> JSONValue {
        try await withCheckedThrowingContinuation { reply in
            waiting.append(Request(method: method, params: params, reply: reply))
            guard !scheduled else { return }
            scheduled = true
            Task {
                try? await Task.sleep(for: Self.gather)
                await self.send()
            }
        }
    }

    private func send() async {
        let requests = waiting
        waiting = []
        scheduled = false
        // The same request asked twice (every client's `Server.GetStatus`) is sent once.
        var distinct: [(method: String, params: JSONValue?)] = []
        var index: [Int] = []
        for request in requests {
            if let same = distinct.firstIndex(where: { $0.method == request.method && $0.params == request.params }) {
                index.append(same)
            } else {
                index.append(distinct.count)
                distinct.append((request.method, request.params))
            }
        }
        do {
            let results = try await Self.exchange(server, distinct)
            for (request, slot) in zip(requests, index) { request.reply.resume(with: results[slot]) }
        } catch {
            for request in requests { request.reply.resume(throwing: error) }
        }
    }

    /// Sends `requests` (ids 1 to n: alone, or as a batch) on one connection and returns each
    /// one's result, or why it was refused. Notifications snapserver sends meanwhile are skipped.
    static func exchange(_ server: PlayerAddress, _ requests: [(method: String, params: JSONValue?)]) async throws -> [Result<JSONValue, any Error>] {
        let objects = requests.enumerated().map { position, request in
            var fields: [String: JSONValue] = ["jsonrpc": .string("2.0"), "id": .number(Double(position + 1)), "method": .string(request.method)]
            if let params = request.params { fields["params"] = params }
            return JSONValue.object(fields)
        }
        let line = objects.count == 1 ? objects[0].text : JSONValue.array(objects).text
        let methods = requests.map(\.method)
        return try await LineExchange.run(server) { lines in
            try await lines.send(line)
            var results: [Int: Result<JSONValue, any Error>] = [:]
            for _ in 0..<100 {
                let answer = try await lines.next()
                guard let reply = try? JSONParser.parse(answer) else {
                    throw PlayerProblem("is not snapserver's control port (it answered what is not JSON)")
                }
                let replies: [JSONValue] = if case .array(let items) = reply { items } else { [reply] }
                for case .object(let fields) in replies {
                    guard case .number(let id)? = fields["id"], let slot = Int(exactly: id), (1...methods.count).contains(slot) else { continue }
                    if let result = fields["result"] {
                        results[slot] = .success(result)
                    } else {
                        let message = (fields["error"].flatMap { if case .object(let error) = $0 { error["message"] } else { nil } })
                            .flatMap { if case .string(let text) = $0 { text } else { nil } } ?? "an error"
                        results[slot] = .failure(PlayerProblem("refused \(methods[slot - 1]): \(message.prefix(200))"))
                    }
                }
                if results.count == methods.count { return (1...methods.count).map { results[$0]! } }
            }
            throw PlayerProblem("sent 100 notifications and no answer to \(methods.joined(separator: ", "))")
        }
    }
}
