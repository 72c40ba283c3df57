import NIOCore

/// What a broker sent that is not MQTT 3.1.1 as a client may receive it. The connection is
/// closed and the reason logged; nothing a broker sends can do more than that.
public struct MQTTProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }

    public init(_ reason: String) { self.reason = reason }
}

/// Reads the packets a broker sends, one at a time, as bytes arrive. Every length is checked:
/// the remaining length is at most four bytes and `maxPacketSize`, and each packet must hold
/// exactly what its type says. Only packets a broker may send a client are accepted.
public struct MQTTPacketDecoder: Sendable {
    /// The largest packet accepted from a broker by default: commands and their JSON are small.
    public static let defaultMaxPacketSize = 256 * 1024

    public let maxPacketSize: Int

    public init(maxPacketSize: Int = defaultMaxPacketSize) {
        self.maxPacketSize = maxPacketSize
    }

    /// The next whole packet in `buffer` (consumed), or nil until more bytes arrive.
    public func next(from buffer: inout ByteBuffer) throws(MQTTProtocolError) -> MQTTPacket? {
        guard let header = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return nil }
        var length = 0
        var multiplier = 1
        var index = buffer.readerIndex + 1
        while true {
            guard let byte = buffer.getInteger(at: index, as: UInt8.self) else { return nil }
            length += Int(byte & 0x7F) * multiplier
            index += 1
            if byte & 0x80 == 0 { break }
            multiplier *= 128
            guard multiplier <= 128 * 128 * 128 else { throw MQTTProtocolError("a remaining length longer than four bytes") }
        }
        guard length <= maxPacketSize else {
            throw MQTTProtocolError("a packet of \(length) bytes, over the \(maxPacketSize) accepted")
        }
        guard buffer.readableBytes >= index - buffer.readerIndex + length else { return nil }
        buffer.moveReaderIndex(to: index)
        var body = buffer.readSlice(length: length)!
        return try Self.packet(header: header, body: &body)
    }

    private static func packet(header: UInt8, body: inout ByteBuffer) throws(MQTTProtocolError) -> MQTTPacket {
        let flags = header & 0x0F
        func exactly(_ count: Int, _ name: String) throws(MQTTProtocolError) {
            guard body.readableBytes == count else { throw MQTTProtocolError("a \(name) of \(body.readableBytes) bytes (it has \(count))") }
            guard flags == 0 else { throw MQTTProtocolError("a \(name) with flags \(flags) (they must be 0)") }
        }
        switch header >> 4 {
        case 2:
            try exactly(2, "CONNACK")
            let acknowledge = body.readInteger(as: UInt8.self)!
            let code = body.readInteger(as: UInt8.self)!
            guard acknowledge & 0xFE == 0 else { throw MQTTProtocolError("a CONNACK with reserved bits set") }
            if code == 0 { return .connectionAccepted(sessionPresent: acknowledge == 1) }
            guard let refused = MQTTPacket.ConnectReturnCode(rawValue: code) else { throw MQTTProtocolError("a CONNACK with return code \(code)") }
            return .connectionRefused(refused)
        case 3:
            let qosBits = (flags >> 1) & 0x03
            guard qosBits < 2 else { throw MQTTProtocolError("a PUBLISH with QoS \(qosBits) (this client subscribes with QoS 0 and 1 only)") }
            let qos = MQTTPacket.QoS(rawValue: qosBits)!
            let topic = try string(&body, "a PUBLISH topic")
            guard !topic.isEmpty else { throw MQTTProtocolError("a PUBLISH with an empty topic") }
            guard !topic.contains("+"), !topic.contains("#") else { throw MQTTProtocolError("a PUBLISH to a topic with a wildcard") }
            var packetID: UInt16?
            if qos == .atLeastOnce {
                guard let id = body.readInteger(as: UInt16.self), id != 0 else { throw MQTTProtocolError("a QoS 1 PUBLISH without a packet id") }
                packetID = id
            }
            let payload = body.readBytes(length: body.readableBytes) ?? []
            return .publish(.init(topic: topic, payload: payload, qos: qos, retain: flags & 1 == 1, packetID: packetID, duplicate: flags & 0x08 != 0))
        case 4:
            try exactly(2, "PUBACK")
            return .publishAcknowledged(packetID: body.readInteger(as: UInt16.self)!)
        case 9:
            guard flags == 0 else { throw MQTTProtocolError("a SUBACK with flags \(flags) (they must be 0)") }
            guard body.readableBytes >= 3, let id = body.readInteger(as: UInt16.self) else {
                throw MQTTProtocolError("a SUBACK of \(body.readableBytes) bytes (it has at least 3)")
            }
            var granted: [MQTTPacket.QoS?] = []
            while let code = body.readInteger(as: UInt8.self) {
                switch code {
                case 0, 1: granted.append(MQTTPacket.QoS(rawValue: code))
                case 0x80: granted.append(nil)
                default: throw MQTTProtocolError("a SUBACK with return code \(code)")
                }
            }
            return .subscribeAcknowledged(packetID: id, granted: granted)
        case 13:
            try exactly(0, "PINGRESP")
            return .pingResponse
        case 0, 15:
            throw MQTTProtocolError("a packet of reserved type \(header >> 4)")
        default:
            throw MQTTProtocolError("a packet of type \(header >> 4), which a broker does not send this client")
        }
    }

    private static func string(_ body: inout ByteBuffer, _ what: String) throws(MQTTProtocolError) -> String {
        guard let length = body.readInteger(as: UInt16.self), let bytes = body.readBytes(length: Int(length)) else {
            throw MQTTProtocolError("\(what) longer than its packet")
        }
        guard let text = String(validating: bytes, as: UTF8.self), !text.unicodeScalars.contains("\u{0}") else {
            throw MQTTProtocolError("\(what) that is not UTF-8 text")
        }
        return text
    }
}
