import JukeboxCore
import JukeboxProtocol

/// Maps one request line to its response line: JSON-RPC 2.0 framing, method dispatch and
/// parameter checks. It never touches a socket, so every method and every error is tested
/// without I/O; the server only moves lines.
public struct ControlHandler: Sendable {
    /// A request line longer than this is refused and the connection closed.
    public static let maxLineLength = 65_536
    /// The longest `client` name. It is copied into every entry it queues and into the state
    /// file, so without a bound a few requests could make the state file gigabytes long.
    public static let maxClientLength = 64
    public static let methods = [
        "enqueue", "queue", "status", "skip", "remove", "clear", "pause", "resume", "pick", "clips", "history",
        "volume", "reload", "subscribe",
    ]

    public struct Reply: Sendable, Equatable {
        /// The response line without its newline; nil for a notification (a request without id).
        public var line: [UInt8]?
        /// The connection asked to receive events from now on.
        public var subscribe = false
        /// The request changed state: the reply may be sent only after `commit(through:)` this mark.
        public var commitMark: UInt64?
        /// The response to send instead if the commit fails.
        public var lineIfCommitFails: [UInt8]?
    }

    static let mutating: Set<String> = ["enqueue", "remove", "clear", "pause", "resume", "pick", "volume"]

    let control: any JukeboxControlling
    /// Who is asking, as shown in `queue` ("who queued them").
    let client: String

    public init(control: any JukeboxControlling, client: String = "client") {
        self.control = control
        self.client = client
    }

    /// Handles a request and, if it changed state, waits until the change is durable.
    public func handle(_ line: [UInt8]) async -> Reply {
        var reply = await handleDeferringCommit(line)
        if let mark = reply.commitMark {
            do {
                try await control.commit(through: mark)
            } catch {
                reply.line = reply.lineIfCommitFails
            }
            reply.commitMark = nil
        }
        return reply
    }

    /// Handles a request but leaves the commit to the caller, so a connection can apply its
    /// next request while earlier ones wait for the disk (all of them then share one write).
    public func handleDeferringCommit(_ line: [UInt8]) async -> Reply {
        guard String(validating: line, as: UTF8.self) != nil else {
            return Reply(line: RPCCoding.error(.parseError("the request is not valid UTF-8"), id: nil))
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(line)
        } catch {
            return Reply(line: RPCCoding.error(.parseError("the request is not valid JSON: \(error)"), id: nil))
        }
        guard case .object(let request) = document else {
            return Reply(line: RPCCoding.error(.invalidRequest("a request must be a JSON object (batches are not supported)"), id: nil))
        }
        let id: RPCID?
        switch request["id"] {
        case nil: id = nil
        case .number(let number)? where number == number.rounded() && abs(number) < 1e15: id = .number(Int64(number))
        case .string(let text)?: id = .string(text)
        default:
            return Reply(line: RPCCoding.error(.invalidRequest("\"id\" must be a string or a whole number"), id: nil))
        }
        guard request["jsonrpc"] == .string("2.0") else {
            return Reply(line: RPCCoding.error(.invalidRequest("\"jsonrpc\" must be \"2.0\""), id: id))
        }
        guard case .string(let method)? = request["method"] else {
            return Reply(line: RPCCoding.error(.invalidRequest("\"method\" must be a string"), id: id))
        }
        var reply: Reply
        do {
            let params = try RPCParams(request["params"], method: method)
            reply = try await dispatch(method, params, id: id)
            // Reading the volume changes nothing; setting it does.
            if Self.mutating.contains(method), method != "volume" || params.fields["level"].map({ $0 != .null }) == true {
                reply.commitMark = await control.markChange()
                reply.lineIfCommitFails = RPCCoding.error(.stateNotSaved("the state file could not be written (see the daemon's log)"), id: id)
            }
        } catch {
            reply = Reply(line: RPCCoding.error(error, id: id))
        }
        // A request without an id is a notification: it is carried out but never answered.
        if id == nil {
            reply.line = nil
            reply.lineIfCommitFails = nil
        }
        return reply
    }

    private func dispatch(_ method: String, _ params: RPCParams, id: RPCID?) async throws(RPCError) -> Reply {
        func answer(_ result: some Encodable, subscribe: Bool = false) -> Reply {
            Reply(line: RPCCoding.result(result, id: id), subscribe: subscribe)
        }
        switch method {
        case "enqueue":
            try params.allow(["clips", "cue", "client"])
            let clips = try params.strings("clips")
            guard !clips.isEmpty else { throw .invalidParams("\"clips\" must name at least one clip") }
            let origin = try params.string("client") ?? client
            guard origin.count <= Self.maxClientLength, !origin.isEmpty else {
                throw .invalidParams("\"client\" must be a name of 1 to \(Self.maxClientLength) characters")
            }
            return answer(try await control.enqueue(clips, withCue: try params.bool("cue") ?? false, origin: origin))
        case "queue": try params.allow([]); return answer(await control.queue())
        case "status": try params.allow([]); return answer(await control.status())
        case "skip": try params.allow([]); return answer(await control.skip())
        case "remove":
            try params.allow(["tickets"])
            let tickets = try params.integers("tickets")
            guard !tickets.isEmpty else { throw .invalidParams("\"tickets\" must list at least one ticket") }
            return answer(try await control.remove(tickets.map { UInt64($0) }))
        case "clear": try params.allow([]); return answer(try await control.clear())
        case "pause": try params.allow([]); return answer(try await control.pause())
        case "resume": try params.allow([]); return answer(try await control.resume())
        case "pick": try params.allow([]); return answer(try await control.pick())
        case "clips": try params.allow([]); return answer(await control.clips())
        case "history":
            try params.allow(["limit"])
            return answer(await control.history(limit: try params.integer("limit", in: 1...ClipPlayQueue.historyLimit) ?? 20))
        case "volume":
            try params.allow(["level"])
            return answer(try await control.volume(try params.integer("level", in: 0...100)))
        case "reload": try params.allow([]); return answer(try await control.reload())
        case "subscribe": try params.allow([]); return answer(SubscribeResult(subscribed: true), subscribe: true)
        default: throw .methodNotFound(method)
        }
    }
}

/// A request's `params`, with checks that name the parameter at fault.
struct RPCParams {
    let fields: [String: JSONValue]
    let method: String

    init(_ value: JSONValue?, method: String) throws(RPCError) {
        self.method = method
        switch value {
        case nil, .null?: fields = [:]
        case .object(let fields)?: self.fields = fields
        default: throw .invalidParams("\"params\" must be an object")
        }
    }

    func allow(_ names: [String]) throws(RPCError) {
        if let unknown = fields.keys.sorted().first(where: { !names.contains($0) }) {
            let known = names.isEmpty ? "it takes none" : "it takes " + names.map { "\"\($0)\"" }.joined(separator: ", ")
            throw .invalidParams("\(method) has no parameter \"\(unknown)\" (\(known))")
        }
    }

    func string(_ name: String) throws(RPCError) -> String? {
        switch fields[name] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?: throw .invalidParams("\"\(name)\" must be a string, not \(other.shortDescription)")
        }
    }

    func bool(_ name: String) throws(RPCError) -> Bool? {
        switch fields[name] {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        case let other?: throw .invalidParams("\"\(name)\" must be true or false, not \(other.shortDescription)")
        }
    }

    func strings(_ name: String) throws(RPCError) -> [String] {
        guard case .array(let items)? = fields[name] else { throw .invalidParams("\"\(name)\" must be a list of strings") }
        var result: [String] = []
        for item in items {
            guard case .string(let text) = item, !text.isEmpty else { throw .invalidParams("\"\(name)\" must be a list of non-empty strings") }
            result.append(text)
        }
        return result
    }

    func integers(_ name: String) throws(RPCError) -> [Int] {
        guard case .array(let items)? = fields[name] else { throw .invalidParams("\"\(name)\" must be a list of ticket numbers") }
        var result: [Int] = []
        for item in items {
            guard case .number(let number) = item, number == number.rounded(), number >= 0, number < 1e15 else {
                throw .invalidParams("\"\(name)\" must be a list of ticket numbers, not \(item.shortDescription)")
            }
            result.append(Int(number))
        }
        return result
    }

    func integer(_ name: String, in range: ClosedRange<Int>) throws(RPCError) -> Int? {
        switch fields[name] {
        case nil, .null?: return nil
        case .number(let number)? where number == number.rounded() && range.contains(Int(exactly: number) ?? Int.min): return Int(number)
        case let other?: throw .invalidParams("\"\(name)\" must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(other.shortDescription)")
        }
    }
}
