import FoundationEssentials
import JukeboxCore
import JukeboxProtocol

/// Encodes responses and event notifications as single JSON lines (no newline).
public enum RPCCoding {
    private struct Success<Result: Encodable>: Encodable {
        var jsonrpc = "2.0"
        var id: RPCID?
        var result: Result
    }

    private struct Failure: Encodable {
        var jsonrpc = "2.0"
        var id: RPCID?
        var error: RPCError

        // JSON-RPC wants "id": null when the id is unknown, not a missing key.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(jsonrpc, forKey: .jsonrpc)
            try container.encode(id, forKey: .id)
            try container.encode(error, forKey: .error)
        }

        enum Keys: String, CodingKey { case jsonrpc, id, error }
    }

    private struct Notification<Params: Encodable>: Encodable {
        var jsonrpc = "2.0"
        var method: String
        var params: Params
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func result(_ result: some Encodable, id: RPCID?) -> [UInt8] {
        (try? Array(encoder().encode(Success(id: id, result: result)))) ?? error(.invalidRequest("the result could not be encoded"), id: id)
    }

    public static func error(_ error: RPCError, id: RPCID?) -> [UInt8] {
        // Encoding plain strings and numbers cannot fail.
        (try? Array(encoder().encode(Failure(id: id, error: error)))) ?? Array(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error","data":{"reason":"internal"}}}"#.utf8)
    }

    public static func notification(_ method: String, _ params: some Encodable) -> [UInt8] {
        (try? Array(encoder().encode(Notification(method: method, params: params)))) ?? []
    }
}
