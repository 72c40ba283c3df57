/// `HOST`, `HOST:PORT` or `[IPv6]:PORT`, as the session names a server (the MQTT broker, a
/// player to duck): the one reader of that form.
enum HostAndPort {
    /// The host and the port (`defaultPort` when none is given); nil when it is none of those
    /// forms, the host is empty, or the port is not 1 to 65535.
    static func parse(_ text: Substring, defaultPort: Int) -> (host: String, port: Int)? {
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let host = String(text[text.index(after: text.startIndex)..<close])
            let after = text[text.index(after: close)...]
            guard !host.isEmpty else { return nil }
            if after.isEmpty { return (host, defaultPort) }
            guard after.hasPrefix(":"), let port = Int(after.dropFirst()), (1...65535).contains(port) else { return nil }
            return (host, port)
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard !parts[0].isEmpty else { return nil }
        switch parts.count {
        case 1: return (String(text), defaultPort)
        case 2:
            guard let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
            return (String(parts[0]), port)
        default: return nil
        }
    }
}
