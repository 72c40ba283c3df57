/// A JSON-RPC error. `reason` is a stable string for scripts (`unknown-clip`, `queue-full`…);
/// `message` is for people and names what was wrong and what to do.
public struct RPCError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    public struct Details: Sendable, Equatable, Codable {
        public var reason: String
        /// For `unknown-clip`: the name that did not match, and close matches.
        public var clip: String?
        public var suggestions: [String]?
        /// For `session-invalid`: one line per problem.
        public var problems: [String]?

        public init(reason: String, clip: String? = nil, suggestions: [String]? = nil, problems: [String]? = nil) {
            self.reason = reason
            self.clip = clip
            self.suggestions = suggestions
            self.problems = problems
        }
    }

    public var code: Int
    public var message: String
    public var data: Details

    public init(code: Int, message: String, data: Details) {
        self.code = code
        self.message = message
        self.data = data
    }

    public var description: String { message }

    // The codes JSON-RPC 2.0 defines.
    public static func parseError(_ message: String) -> RPCError { RPCError(code: -32700, message: message, data: .init(reason: "parse-error")) }
    public static func invalidRequest(_ message: String) -> RPCError { RPCError(code: -32600, message: message, data: .init(reason: "invalid-request")) }
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: -32601, message: "unknown method \"\(method)\"", data: .init(reason: "unknown-method"))
    }
    public static func invalidParams(_ message: String) -> RPCError { RPCError(code: -32602, message: message, data: .init(reason: "invalid-params")) }
    public static func tooLong(limit: Int) -> RPCError {
        RPCError(code: -32600, message: "request line longer than \(limit) bytes; closing the connection", data: .init(reason: "line-too-long"))
    }
}
