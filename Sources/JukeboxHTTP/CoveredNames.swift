#if canImport(Glibc)
import Glibc
#endif
import X509

/// The DNS names and addresses a server certificate is valid for: where a plain-HTTP request
/// may be sent on to HTTPS. A browser would refuse any other name at the handshake, and
/// following a request's `Host` anywhere else would make this port send people to another
/// site.
struct CoveredNames: Sendable, Equatable {
    /// Lower case, without a trailing dot; `*.example.org` covers one label in its place.
    var dnsNames: [String]
    /// 4 or 16 bytes each.
    var addresses: [[UInt8]]

    init(dnsNames: [String], addresses: [[UInt8]]) {
        self.dnsNames = dnsNames.map { Self.normalised($0) }
        self.addresses = addresses
    }

    /// The subject alternative names of `certificate`.
    init(of certificate: Certificate) {
        var names: [String] = []
        var addresses: [[UInt8]] = []
        for name in (try? certificate.extensions.subjectAlternativeNames).map(Array.init) ?? [] {
            switch name {
            case .dnsName(let text): names.append(text)
            case .ipAddress(let bytes) where bytes.bytes.count == 4 || bytes.bytes.count == 16: addresses.append(Array(bytes.bytes))
            default: continue
            }
        }
        self.init(dnsNames: names, addresses: addresses)
    }

    /// Whether `host` (a `Host` header's name, without port or brackets) is covered.
    func covers(_ host: String) -> Bool {
        let name = Self.normalised(host)
        if let address = Self.address(name) { return addresses.contains(address) }
        return dnsNames.contains { covered in
            if covered == name { return true }
            guard covered.hasPrefix("*."), let dot = name.firstIndex(of: ".") else { return false }
            return name[..<dot].count > 0 && name[name.index(after: dot)...] == covered.dropFirst(2)
        }
    }

    /// The bytes of an IPv4 or IPv6 address written the usual way, or nil for a name.
    static func address(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    static func normalised(_ name: String) -> String {
        let lower = name.lowercased()
        return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }
}
