import Crypto
import Glibc
import ESPHomeAPI
import JukeboxCore
import JukeboxFiles

/// What the device says of itself: its node name and a MAC address, which Home Assistant
/// keys the device on. The address is made from `/etc/machine-id` and the node name, so it is
/// the same at every start, differs between two sessions on one machine, and is marked as
/// locally administered (it is no network card's).
public struct DeviceIdentity: Sendable, Equatable {
    public var nodeName: String
    public var friendlyName: String
    public var macAddress: String

    public init(settings: ESPHomeSettings, machineID: String = DeviceIdentity.machineID()) {
        nodeName = settings.nodeName
        friendlyName = settings.name
        let digest = Array(SHA256.hash(data: Array("\(machineID)\n\(settings.nodeName)".utf8)))
        var bytes = Array(digest.prefix(6))
        // Unicast, locally administered.
        bytes[0] = (bytes[0] & 0xFC) | 0x02
        macAddress = bytes.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// The machine's id (`/etc/machine-id`), or its host name where there is none.
    public static func machineID() -> String {
        if let bytes = try? FilePath.read("/etc/machine-id", limit: 256) {
            let id = String(decoding: bytes.filter { $0 > 0x20 && $0 < 0x7F }, as: UTF8.self)
            if !id.isEmpty { return id }
        }
        var buffer = [CChar](repeating: 0, count: 256)
        return gethostname(&buffer, buffer.count) == 0 ? String(decoding: buffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self) : "jukeboxd"
    }

    /// The address as ESPHome writes it in its hello and on mDNS: 12 hex digits, lower case.
    public var bareMACAddress: String { macAddress.lowercased().filter { $0 != ":" } }

    var serverIdentity: ESPHomeServerConnection.Identity {
        ESPHomeServerConnection.Identity(name: nodeName, macAddress: bareMACAddress)
    }
}
