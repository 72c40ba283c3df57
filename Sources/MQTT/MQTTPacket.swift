import NIOCore

/// The MQTT 3.1.1 packets a client sends and receives (QoS 0 and 1; no QoS 2). Encoding is
/// for what a client sends; decoding (`MQTTPacketDecoder`) accepts only what a broker may send
/// a client, and checks every length against what the packet holds.
public enum MQTTPacket: Equatable, Sendable {
    case connect(Connect)
    case connectionAccepted(sessionPresent: Bool)
    case connectionRefused(ConnectReturnCode)
    case publish(Publish)
    case publishAcknowledged(packetID: UInt16)
    case subscribe(packetID: UInt16, topics: [Subscription])
    /// The QoS granted for each topic, or nil where the broker refused it.
    case subscribeAcknowledged(packetID: UInt16, granted: [QoS?])
    case pingRequest
    case pingResponse
    case disconnect

    public enum QoS: UInt8, Sendable, Comparable {
        case atMostOnce = 0
        case atLeastOnce = 1

        public static func < (a: QoS, b: QoS) -> Bool { a.rawValue < b.rawValue }
    }

    public struct Connect: Equatable, Sendable {
        public var clientID: String
        public var keepAlive: UInt16
        public var username: String?
        public var password: String?
        public var will: Publish?

        public init(clientID: String, keepAlive: UInt16, username: String? = nil, password: String? = nil, will: Publish? = nil) {
            self.clientID = clientID
            self.keepAlive = keepAlive
            self.username = username
            self.password = password
            self.will = will
        }
    }

    public struct Publish: Equatable, Sendable {
        public var topic: String
        public var payload: [UInt8]
        public var qos: QoS
        public var retain: Bool
        /// Set for QoS 1.
        public var packetID: UInt16?
        public var duplicate: Bool

        public init(topic: String, payload: [UInt8], qos: QoS = .atMostOnce, retain: Bool = false, packetID: UInt16? = nil, duplicate: Bool = false) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
            self.packetID = packetID
            self.duplicate = duplicate
        }

        public init(topic: String, text: String, qos: QoS = .atMostOnce, retain: Bool = false) {
            self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
        }
    }

    public struct Subscription: Equatable, Sendable {
        public var filter: String
        public var qos: QoS

        public init(_ filter: String, qos: QoS = .atLeastOnce) {
            self.filter = filter
            self.qos = qos
        }
    }

    /// CONNACK's refusals (MQTT 3.1.1, 3.2.2.3), in words a person can act on.
    public enum ConnectReturnCode: UInt8, Sendable, Error, CustomStringConvertible {
        case unacceptableProtocolVersion = 1
        case identifierRejected = 2
        case serverUnavailable = 3
        case badUsernameOrPassword = 4
        case notAuthorized = 5

        public var description: String {
            switch self {
            case .unacceptableProtocolVersion: "the broker does not speak MQTT 3.1.1"
            case .identifierRejected: "the broker rejected the client id"
            case .serverUnavailable: "the broker is unavailable"
            case .badUsernameOrPassword: "the broker refused the username or password (check the session's mqtt username and passwordFile)"
            // Mosquitto 2 answers a wrong password with this too.
            case .notAuthorized: "the broker does not authorise this client (check the session's mqtt username and passwordFile, and the broker's ACL)"
            }
        }
    }

    // MARK: - Encoding

    /// The packet in its wire form.
    public func encode(into buffer: inout ByteBuffer) {
        var body = ByteBuffer()
        let header: UInt8
        switch self {
        case .connect(let connect):
            Self.writeString("MQTT", into: &body)
            body.writeInteger(UInt8(4))  // protocol level 3.1.1
            var flags: UInt8 = 0x02  // clean session
            if let will = connect.will {
                flags |= 0x04 | will.qos.rawValue << 3 | (will.retain ? 0x20 : 0)
            }
            if connect.password != nil { flags |= 0x40 }
            if connect.username != nil { flags |= 0x80 }
            body.writeInteger(flags)
            body.writeInteger(connect.keepAlive)
            Self.writeString(connect.clientID, into: &body)
            if let will = connect.will {
                Self.writeString(will.topic, into: &body)
                body.writeInteger(UInt16(will.payload.count))
                body.writeBytes(will.payload)
            }
            if let username = connect.username { Self.writeString(username, into: &body) }
            if let password = connect.password { Self.writeString(password, into: &body) }
            header = 0x10
        case .connectionAccepted(let present):
            body.writeBytes([present ? 1 : 0, 0])
            header = 0x20
        case .connectionRefused(let code):
            body.writeBytes([0, code.rawValue])
            header = 0x20
        case .publish(let publish):
            Self.writeString(publish.topic, into: &body)
            if publish.qos != .atMostOnce { body.writeInteger(publish.packetID ?? 0) }
            body.writeBytes(publish.payload)
            header = 0x30 | (publish.duplicate ? 0x08 : 0) | publish.qos.rawValue << 1 | (publish.retain ? 1 : 0)
        case .publishAcknowledged(let id):
            body.writeInteger(id)
            header = 0x40
        case .subscribe(let id, let topics):
            body.writeInteger(id)
            for topic in topics {
                Self.writeString(topic.filter, into: &body)
                body.writeInteger(topic.qos.rawValue)
            }
            header = 0x82
        case .subscribeAcknowledged(let id, let granted):
            body.writeInteger(id)
            for qos in granted { body.writeInteger(qos?.rawValue ?? 0x80) }
            header = 0x90
        case .pingRequest: header = 0xC0
        case .pingResponse: header = 0xD0
        case .disconnect: header = 0xE0
        }
        buffer.writeInteger(header)
        var length = body.readableBytes
        repeat {
            var byte = UInt8(length % 128)
            length /= 128
            if length > 0 { byte |= 0x80 }
            buffer.writeInteger(byte)
        } while length > 0
        buffer.writeBuffer(&body)
    }

    public var bytes: [UInt8] {
        var buffer = ByteBuffer()
        encode(into: &buffer)
        return Array(buffer.readableBytesView)
    }

    private static func writeString(_ text: String, into buffer: inout ByteBuffer) {
        let utf8 = Array(text.utf8.prefix(Int(UInt16.max)))
        buffer.writeInteger(UInt16(utf8.count))
        buffer.writeBytes(utf8)
    }
}
