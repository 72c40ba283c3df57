import Glibc
import JukeboxAvahi
import JukeboxCore
import JukeboxFiles
import Logging

/// Home Assistant finds ESPHome devices by mDNS: the service `_esphomelib._tcp` under the node
/// name, with the TXT fields its ESPHome integration reads (`mac` above all: without it the
/// device is not offered). jukeboxd announces the media player the same way, through
/// avahi-daemon, so it shows up under Settings → Devices & services as "Discovered".
struct ESPHomeAdvertisement: Sendable {
    static let serviceType = "_esphomelib._tcp"
    /// The Noise protocol ESPHome names in `api_encryption`, so Home Assistant asks for the key
    /// before it first connects.
    static let noiseProtocol = "Noise_NNpsk0_25519_ChaChaPoly_SHA256"
    /// How often a D-Bus or avahi-daemon that failed is tried again: the log says "every minute".
    static let retry: Duration = .seconds(60)

    private let publisher: AvahiPublisher
    /// Where avahi's thread is started and joined: never the cooperative pool.
    private let work: BlockingWorkQueue

    /// The service for a listener on `port`; nil on loopback, where nothing on the network
    /// could connect.
    static func service(settings: ESPHomeSettings, identity: DeviceIdentity, port: Int, network: String) -> DNSService? {
        guard !settings.isLoopback, let port = UInt16(exactly: port) else { return nil }
        var txt: [DNSService.TXTEntry] = [
            .init("friendly_name", identity.friendlyName),
            .init("version", ClientHandler.esphomeVersion),
            .init("mac", identity.bareMACAddress),
            .init("platform", "host"),
            .init("board", "jukeboxd"),
            .init("network", network),
        ]
        if settings.encryptionKey != nil { txt.append(.init("api_encryption", noiseProtocol)) }
        // A listener on one address is announced on that address's interface and family only,
        // so Home Assistant is never given an address nothing listens on.
        let (interface, family) = placement(settings.host)
        return DNSService(name: identity.nodeName, type: serviceType, port: port, txt: txt, interfaceIndex: interface, family: family)
    }

    /// Starts announcing (on a thread of its own); nil when there is nothing to announce.
    static func start(settings: ESPHomeSettings, identity: DeviceIdentity, port: Int, logger: Logger) async -> ESPHomeAdvertisement? {
        let work = BlockingWorkQueue(label: "jukebox.esphome.mdns")
        return await work.run { () -> ESPHomeAdvertisement? in
            guard let service = service(settings: settings, identity: identity, port: port, network: networkKind()) else { return nil }
            let address = "\(settings.host == "0.0.0.0" || settings.host == "::" ? "this machine's address" : settings.host):\(port)"
            let publisher = AvahiPublisher(service: service, retry: retry) { event in
                let (level, line) = logLine(event, friendlyName: identity.friendlyName, address: address)
                logger.log(level: level, "\(line)")
            }
            publisher.start()
            return ESPHomeAdvertisement(publisher: publisher, work: work)
        }
    }

    /// Withdraws the announcement (avahi-daemon says goodbye on the network).
    func stop() async {
        await work.run { [publisher] in publisher.stop() }
    }

    /// What each change of the announcement means to the person reading the log.
    static func logLine(_ event: PublicationEvent, friendlyName: String, address: String) -> (Logger.Level, String) {
        let byAddress = "add it in Home Assistant by address (Settings → Devices & services → Add integration → ESPHome, host \(address))"
        return switch event {
        case .published(let name):
            (.info, "Home Assistant can discover the media player \"\(friendlyName)\": announced on the network as \(name) (\(serviceType), through avahi-daemon)")
        case .waitingForDaemon:
            (.warning, "avahi-daemon is not running, so Home Assistant cannot discover the media player \"\(friendlyName)\": start it (sudo systemctl enable --now avahi-daemon) and jukeboxd announces it at once, or \(byAddress)")
        case .renamed(let from, let to):
            (.warning, "another device on the network is announced as \(from); the media player \"\(friendlyName)\" is announced as \(to) instead. Give each jukeboxd its own esphome.name")
        case .noMessageBus:
            (.warning, "the system's D-Bus cannot be reached, so avahi-daemon cannot announce the media player \"\(friendlyName)\"; jukeboxd tries again every minute. Meanwhile \(byAddress)")
        case .failed(let words):
            (.warning, "the media player \"\(friendlyName)\" cannot be announced on the network: \(words); jukeboxd tries again every minute. Meanwhile \(byAddress)")
        }
    }

    /// How the machine reaches its network, as ESPHome's `network` field says it: "wifi" when
    /// the default route goes through a wireless interface, else "ethernet".
    static func networkKind(routes: String? = nil, isWireless: (String) -> Bool = { access("/sys/class/net/\($0)/wireless", F_OK) == 0 }) -> String {
        let table = routes ?? (try? FilePath.read("/proc/net/route", limit: 64 * 1024)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count > 1, fields[1] == "00000000" { return isWireless(String(fields[0])) ? "wifi" : "ethernet" }
        }
        return "ethernet"
    }

    /// The interface and family a listen address is announced on: nil for all.
    static func placement(_ host: String) -> (Int32?, DNSService.AddressFamily?) {
        if host == "0.0.0.0" { return (nil, .ipv4) }
        if host == "::" { return (nil, nil) }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return (interfaceIndex { address in
            guard address.pointee.sa_family == sa_family_t(AF_INET) else { return false }
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr == v4.s_addr }
        }, .ipv4) }
        if inet_pton(AF_INET6, host, &v6) == 1 { return (interfaceIndex { address in
            guard address.pointee.sa_family == sa_family_t(AF_INET6) else { return false }
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { candidate in
                withUnsafeBytes(of: candidate.pointee.sin6_addr) { a in withUnsafeBytes(of: v6) { b in a.elementsEqual(b) } }
            }
        }, .ipv6) }
        // A host name: announced as avahi announces the machine.
        return (nil, nil)
    }

    private static func interfaceIndex(matching matches: (UnsafeMutablePointer<sockaddr>) -> Bool) -> Int32? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            if let address = current.pointee.ifa_addr, matches(address) {
                let index = if_nametoindex(current.pointee.ifa_name)
                return index == 0 ? nil : Int32(index)
            }
            entry = current.pointee.ifa_next
        }
        return nil
    }
}
