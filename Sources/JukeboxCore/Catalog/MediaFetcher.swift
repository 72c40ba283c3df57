/// Fetches audio by address, for Home Assistant's `play_media` and announcements
/// (`JukeboxFetch`'s speaks HTTP and HTTPS). The body is handed over piece by piece, never
/// held whole; `receive` may throw to stop the fetch, and its error comes out as it is.
public protocol MediaFetcher: Sendable {
    func fetch(_ address: String, into receive: @escaping @Sendable ([UInt8]) async throws -> Void) async throws
}

/// Why an address gave no audio, in words (no NIO or POSIX text).
public struct MediaFetchError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// What fetching media by address may take.
public enum MediaLimits {
    /// The most a fetch may bring (the session's `maxUploadSize` too, if it is smaller):
    /// minutes of FLAC, far more than an announcement.
    public static let maxBytes = 20 << 20
    /// The whole fetch, from the request to the last byte.
    public static let timeout: Duration = .seconds(30)
    public static let maxRedirects = 5
    public static let maxAddressLength = 2048
    /// Fetched media waiting in the queue (or playing) at once; another is refused.
    public static let maxWaiting = 8

    /// An address as a log shows it: without its query, which may hold a token, and at most
    /// 100 characters.
    public static func shown(_ address: String) -> String {
        let bare = address.prefix { $0 != "?" && $0 != "#" }
        return bare.count > 100 ? String(bare.prefix(99)) + "…" : String(bare)
    }

    /// Why `address` may not be fetched, or nil: http or https, a host, at most
    /// `maxAddressLength` characters, no spaces or control characters.
    public static func problem(_ address: String) -> String? {
        let shown = address.count > 80 ? "\"\(address.prefix(77))…\"" : "\"\(address)\""
        guard address.utf8.count <= maxAddressLength else {
            return "the address is \(address.utf8.count) characters long, over the \(maxAddressLength) accepted"
        }
        guard !address.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            return "\(shown) holds spaces or control characters, which an address may not"
        }
        let lower = address.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }) else {
            return "\(shown) is not an http:// or https:// address"
        }
        let host = address.dropFirst(scheme.count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !host.isEmpty, !host.hasPrefix(":"), !host.contains("@") else {
            return "\(shown) names no host (or holds a user name, which jukeboxd does not send)"
        }
        return nil
    }
}
