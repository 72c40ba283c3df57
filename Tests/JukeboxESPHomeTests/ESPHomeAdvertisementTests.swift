import Glibc
import JukeboxAvahi
import JukeboxCore
@testable import JukeboxESPHome
import Testing

/// What the media player announces on mDNS, and the words its announcement's changes are
/// logged in. (Announced for real, through avahi-daemon, in EndToEndTests' ESPHomeDiscoveryTests.)
struct ESPHomeAdvertisementTests {
    static let key = [UInt8](repeating: 7, count: 32)

    func settings(_ host: String, key: [UInt8]? = ESPHomeAdvertisementTests.key) -> ESPHomeSettings {
        ESPHomeSettings(host: host, port: 6053, encryptionKey: key, name: "Desk speaker")
    }

    @Test func theServiceIsTheNodeNameWithTheFieldsHomeAssistantReads() throws {
        let settings = settings("0.0.0.0")
        let identity = DeviceIdentity(settings: settings, machineID: "0123456789abcdef")
        let service = try #require(ESPHomeAdvertisement.service(settings: settings, identity: identity, port: 40000, network: "wifi"))
        #expect(service.name == "desk-speaker" && service.type == "_esphomelib._tcp" && service.port == 40000)
        #expect(service.txt == [
            .init("friendly_name", "Desk speaker"), .init("version", "2025.12.0"), .init("mac", identity.bareMACAddress),
            .init("platform", "host"), .init("board", "jukeboxd"), .init("network", "wifi"),
            .init("api_encryption", "Noise_NNpsk0_25519_ChaChaPoly_SHA256"),
        ])
        #expect(identity.bareMACAddress.count == 12 && identity.bareMACAddress == identity.bareMACAddress.lowercased())
        // 0.0.0.0 listens on IPv4 only: no IPv6 address is given to Home Assistant.
        #expect(service.interfaceIndex == nil && service.family == .ipv4)
        #expect(service.problem == nil)
    }

    @Test func aListenerOnLoopbackIsNotAnnouncedAndOneOnAllFamiliesIsOnBoth() throws {
        let identity = DeviceIdentity(settings: settings("127.0.0.1", key: nil), machineID: "x")
        #expect(ESPHomeAdvertisement.service(settings: settings("127.0.0.1", key: nil), identity: identity, port: 6053, network: "ethernet") == nil)
        #expect(ESPHomeAdvertisement.service(settings: settings("::1", key: nil), identity: identity, port: 6053, network: "ethernet") == nil)
        #expect(ESPHomeAdvertisement.service(settings: settings("localhost", key: nil), identity: identity, port: 6053, network: "ethernet") == nil)
        let both = try #require(ESPHomeAdvertisement.service(settings: settings("::"), identity: identity, port: 6053, network: "ethernet"))
        #expect(both.family == nil && both.interfaceIndex == nil)
    }

    @Test func aListenerOnOneAddressIsAnnouncedOnItsInterfaceOnly() throws {
        // Loopback is the interface every machine has (never announced, but found the same
        // way); an address of no interface of this machine gives none.
        let loopback = ESPHomeAdvertisement.placement("127.0.0.1")
        #expect(loopback.0 == Int32(if_nametoindex("lo")) && loopback.1 == .ipv4)
        let loopback6 = ESPHomeAdvertisement.placement("::1")
        #expect(loopback6.1 == .ipv6)
        let elsewhere = ESPHomeAdvertisement.placement("198.51.100.77")
        #expect(elsewhere.0 == nil && elsewhere.1 == .ipv4)
        #expect(ESPHomeAdvertisement.placement("0.0.0.0") == (nil, .ipv4))
        #expect(ESPHomeAdvertisement.placement("::") == (nil, nil))
        #expect(ESPHomeAdvertisement.placement("speaker.lan") == (nil, nil), "a host name: announced as the machine is")
    }

    @Test func theNetworkIsWifiWhenTheDefaultRouteIsWireless() {
        let routes = """
            Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
            eth0\t0002A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
            wlan0\t00000000\t0102A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0
            """
        #expect(ESPHomeAdvertisement.networkKind(routes: routes, isWireless: { $0 == "wlan0" }) == "wifi")
        #expect(ESPHomeAdvertisement.networkKind(routes: routes, isWireless: { _ in false }) == "ethernet")
        #expect(ESPHomeAdvertisement.networkKind(routes: "Iface\tDestination\n", isWireless: { _ in true }) == "ethernet", "no default route")
    }

    @Test func theNameAndEachTXTEntryAreWithinDNSLimits() {
        func service(name: String, value: String = "x") -> DNSService {
            DNSService(name: name, type: "_esphomelib._tcp", port: 6053, txt: [.init("k", value)])
        }
        #expect(service(name: String(repeating: "a", count: 62)).problem == nil)
        #expect(service(name: String(repeating: "a", count: 63)).problem == nil)
        #expect(service(name: String(repeating: "a", count: 64)).problem?.contains("is not 1 to 63 bytes long") == true)
        #expect(service(name: String(repeating: "é", count: 32)).problem != nil, "64 bytes of UTF-8")
        #expect(service(name: "").problem != nil)
        // "k=" and the value: 255 bytes at most.
        #expect(service(name: "a", value: String(repeating: "v", count: 252)).problem == nil)
        #expect(service(name: "a", value: String(repeating: "v", count: 253)).problem == nil)
        #expect(service(name: "a", value: String(repeating: "v", count: 254)).problem?.contains("over 255 bytes") == true)
        #expect(DNSService(name: "a", type: "_x._tcp", port: 1, txt: [.init("a=b", "c")]).problem != nil)
        // The longest names a session allows fit: a friendly name of 40 characters of 4 bytes.
        let longest = ESPHomeSettings(host: "0.0.0.0", encryptionKey: Self.key, name: String(repeating: "🎵", count: ESPHomeSettings.maxNameLength))
        let identity = DeviceIdentity(settings: longest, machineID: "x")
        #expect(ESPHomeAdvertisement.service(settings: longest, identity: identity, port: 6053, network: "ethernet")?.problem == nil)
    }

    @Test func eachChangeOfTheAnnouncementIsLoggedInWordsThatSayWhatToDo() {
        func line(_ event: PublicationEvent) -> String {
            ESPHomeAdvertisement.logLine(event, friendlyName: "Desk speaker", address: "192.0.2.5:6053").1
        }
        #expect(ESPHomeAdvertisement.logLine(.published(name: "desk-speaker"), friendlyName: "Desk speaker", address: "").0 == .info)
        #expect(line(.published(name: "desk-speaker")) == "Home Assistant can discover the media player \"Desk speaker\": announced on the network as desk-speaker (_esphomelib._tcp, through avahi-daemon)")
        #expect(line(.waitingForDaemon).contains("sudo systemctl enable --now avahi-daemon") && line(.waitingForDaemon).contains("host 192.0.2.5:6053"))
        #expect(line(.renamed(from: "a", to: "a #2")).contains("Give each jukeboxd its own esphome.name"))
        #expect(line(.noMessageBus).contains("add it in Home Assistant by address"))
        #expect(line(.failed("avahi-daemon refused the name")).contains("cannot be announced on the network: avahi-daemon refused the name"))
        for event in [PublicationEvent.waitingForDaemon, .renamed(from: "a", to: "b"), .noMessageBus, .failed("x")] {
            #expect(ESPHomeAdvertisement.logLine(event, friendlyName: "", address: "").0 == .warning)
        }
    }
}
