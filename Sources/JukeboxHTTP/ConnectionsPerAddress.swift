#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import Synchronization

/// How many connections each address has open, so that one address cannot take every
/// connection the web remote serves: a client that opens many and trickles a byte now and
/// then would otherwise lock everyone else out. An IPv6 address counts by its /64 network,
/// which one machine usually has whole.
///
/// A few addresses together could still fill the server (four at a quarter each), so the
/// last `reserve` places are kept for addresses that hold no connection yet: someone new
/// always gets in.
final class ConnectionsPerAddress: Sendable {
    let limit: Int
    /// Connections served at once, in all.
    let total: Int
    /// Of `total`, the places only an address with no connection open may take.
    let reserve: Int
    private let logger: Logger
    private let open = Mutex((byAddress: [String: Int](), all: 0))
    /// Addresses told of in the log, so a flood is one line an address per burst.
    private let told = Mutex(Set<String>())

    /// A quarter of what the server serves at once, and at least 8 (a browser opens up to 6
    /// to one server, and the event stream holds one).
    static func limit(serving total: Int) -> Int { max(8, total / 4) }

    /// An eighth of what the server serves, and at least one.
    static func reserve(serving total: Int) -> Int { max(1, total / 8) }

    init(limit: Int, total: Int, logger: Logger) {
        self.limit = limit
        self.total = total
        self.reserve = Self.reserve(serving: total)
        self.logger = logger
    }

    /// Counts a new connection from `address`; false when that address has `limit` open, or
    /// holds some and only the reserved places are left.
    func opened(_ address: String) -> Bool {
        let refusal = open.withLock { open -> String? in
            let held = open.byAddress[address, default: 0]
            guard held < limit else { return "it has \(limit) open, the most one address may have" }
            guard held == 0 || open.all < total - reserve else {
                return "it has \(held) open, and the last \(reserve) of the \(total) places are kept for addresses that have none"
            }
            open.byAddress[address] = held + 1
            open.all += 1
            return nil
        }
        guard let refusal else { return true }
        if told.withLock({ $0.count < 1000 && $0.insert(address).inserted }) {
            logger.warning("the web remote refuses more connections from \(address): \(refusal)")
        }
        return false
    }

    func closed(_ address: String) {
        let left = open.withLock { open -> Int in
            let left = open.byAddress[address, default: 1] - 1
            open.byAddress[address] = left > 0 ? left : nil
            open.all = max(0, open.all - 1)
            return left
        }
        if left <= limit / 2 { _ = told.withLock { $0.remove(address) } }
    }

    /// The key an address counts under: IPv4 whole, IPv6 by its first 64 bits (an
    /// IPv4-mapped IPv6 address as the IPv4 address it is).
    static func key(_ address: SocketAddress?) -> String {
        switch address {
        case .v4?: return address?.ipAddress ?? "?"
        case .v6(let v6)?:
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                return bytes.suffix(4).map(String.init).joined(separator: ".")
            }
            let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            return groups.joined(separator: ":") + "::/64"
        default: return address?.description ?? "?"
        }
    }
}

/// Put on every web connection: counts it for its address while it is open, and closes it at
/// once when its address already has as many as it may.
final class AddressLimitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private let connections: ConnectionsPerAddress
    private var counted: String?

    init(_ connections: ConnectionsPerAddress) { self.connections = connections }

    func handlerAdded(context: ChannelHandlerContext) {
        let key = ConnectionsPerAddress.key(context.channel.remoteAddress)
        if connections.opened(key) {
            counted = key
        } else {
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if let counted { connections.closed(counted) }
        counted = nil
    }
}
