import JukeboxCore
import JukeboxProtocol

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

    func requiredString(_ name: String) throws(RPCError) -> String {
        guard let text = try string(name), !text.isEmpty else { throw .invalidParams("\(method) needs \"\(name)\"") }
        return text
    }

    /// The given fields among `names`, as they were sent: the core checks them.
    func fields(_ names: [String]) -> [String: JSONValue] { fields.filter { names.contains($0.key) } }

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
