#if canImport(Glibc)
import Glibc
#endif
import SwiftASN1
import X509

/// The names and addresses a phone may use to reach this machine: its host name, the
/// name mDNS gives it (`HOST.local`), `localhost`, and every address of every interface.
public struct ServerNames: Sendable, Equatable {
    public var hostName: String
    /// Lower case, without repeats, the host name first.
    public var dnsNames: [String]
    /// 4 or 16 bytes each, without repeats.
    public var addresses: [[UInt8]]

    public init(hostName: String, addresses: [[UInt8]]) {
        let host = hostName.lowercased()
        self.hostName = host
        var names: [String] = []
        for name in [host, host.hasSuffix(".local") ? "" : host + ".local", "localhost"] where !name.isEmpty && !names.contains(name) {
            names.append(name)
        }
        dnsNames = names
        var unique: [[UInt8]] = []
        for address in addresses where (address.count == 4 || address.count == 16) && !unique.contains(address) { unique.append(address) }
        self.addresses = unique
    }

    /// This machine's, now.
    public static func ofThisMachine() -> ServerNames {
        var buffer = [CChar](repeating: 0, count: 256)
        let host = gethostname(&buffer, buffer.count) == 0 ? String(decoding: buffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self) : ""
        // A name that is not a plain DNS label (a container's, say) is left out.
        let usable = !host.isEmpty && host.utf8.allSatisfy { $0 < 128 && (isalnum(Int32($0)) != 0 || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")) }
        return ServerNames(hostName: usable ? host : "localhost", addresses: interfaceAddresses())
    }

    static func interfaceAddresses() -> [[UInt8]] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [[127, 0, 0, 1]] }
        defer { freeifaddrs(list) }
        var addresses: [[UInt8]] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let address = entry.pointee.ifa_addr else { continue }
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    var bytes = $0.pointee.sin_addr
                    addresses.append(withUnsafeBytes(of: &bytes) { Array($0) })
                }
            case AF_INET6:
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    var bytes = $0.pointee.sin6_addr
                    addresses.append(withUnsafeBytes(of: &bytes) { Array($0) })
                }
            default: continue
            }
        }
        return addresses
    }

    /// The DNS names the authority made for `hostName` may sign: anything under `.local`,
    /// `localhost`, and the host name itself.
    static func permittedDomains(hostName: String) -> [String] {
        var domains = ["local", "localhost"]
        let host = hostName.lowercased()
        if !host.isEmpty, !host.hasSuffix(".local"), host != "localhost" { domains.append(host) }
        return domains
    }

    /// These names less those `authority`'s name constraints forbid (the host's name, after
    /// the machine was renamed): a certificate with a forbidden name is refused whole.
    func permitted(by authority: Certificate) -> ServerNames {
        guard let constraints = try? authority.extensions.nameConstraints else { return self }
        let domains = Array(constraints.permittedDNSDomains).map { $0.lowercased() }
        guard !domains.isEmpty else { return self }
        var kept = self
        kept.dnsNames = dnsNames.filter { name in domains.contains { name == $0 || name.hasSuffix("." + $0) } }
        return kept
    }

    var generalNames: [GeneralName] {
        dnsNames.map { GeneralName.dnsName($0) } + addresses.map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) }
    }

    /// `raspberrypi, raspberrypi.local, localhost, 127.0.0.1, 192.168.1.20, ::1`.
    public var described: String {
        (dnsNames + addresses.map(Self.text(of:))).joined(separator: ", ")
    }

    /// The addresses a phone on the network can open, `scheme://NAME:PORT/`: `HOST.local`
    /// and the host's name, then each address that is not loopback or link-local (IPv4
    /// first); at most `limit`.
    public func urls(scheme: String, port: Int, limit: Int = 6) -> [String] {
        // A machine whose name is no DNS label has only "localhost": no name to offer.
        let names = (hostName == "localhost" ? [] : dnsNames.filter { $0 != "localhost" }).sorted { $0.hasSuffix(".local") && !$1.hasSuffix(".local") }
        let reachable = addresses.filter { address in
            address.count == 4 ? address[0] != 127 && !(address[0] == 169 && address[1] == 254)
                : !(address.allSatisfy { $0 == 0 } || address == [UInt8](repeating: 0, count: 15) + [1] || (address[0] == 0xFE && address[1] & 0xC0 == 0x80))
        }.sorted { $0.count < $1.count }
        let hosts = names + reachable.map { $0.count == 4 ? Self.text(of: $0) : "[\(Self.text(of: $0))]" }
        return hosts.prefix(limit).map { "\(scheme)://\($0):\(port)/" }
    }

    /// A DNS name or address as a person writes it.
    static func text(of name: GeneralName) -> String {
        switch name {
        case .dnsName(let name): name
        case .ipAddress(let bytes): text(of: Array(bytes.bytes))
        default: "\(name)"
        }
    }

    static func text(of address: [UInt8]) -> String {
        var text = [CChar](repeating: 0, count: 64)
        let family = address.count == 4 ? AF_INET : AF_INET6
        _ = address.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        return String(decoding: text.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
    }
}
