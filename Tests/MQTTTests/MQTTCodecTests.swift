import JukeboxCore
import JukeboxTestSupport
import MQTT
import NIOCore
import Testing

/// The MQTT 3.1.1 codec without sockets: what the client sends, byte for byte as the standard
/// gives it; what it accepts from a broker, split anywhere; and everything else refused with a
/// reason, including 3 000 seeded mutations of a broker's stream.
@Suite("MQTT codec")
struct MQTTCodecTests {
    typealias Packet = MQTTPacket

    func decodeAll(_ bytes: [UInt8], decoder: MQTTPacketDecoder = .init()) throws(MQTTProtocolError) -> [Packet] {
        var buffer = ByteBuffer(bytes: bytes)
        var packets: [Packet] = []
        while let packet = try decoder.next(from: &buffer) { packets.append(packet) }
        return packets
    }

    func refusal(_ bytes: [UInt8], decoder: MQTTPacketDecoder = .init()) -> String? {
        do { _ = try decodeAll(bytes, decoder: decoder); return nil } catch { return error.reason }
    }

    // MARK: What the client sends

    @Test func connectIsEncodedAsTheStandardSays() {
        let plain = Packet.connect(.init(clientID: "jb", keepAlive: 60)).bytes
        #expect(plain == [0x10, 14, 0, 4, 77, 81, 84, 84, 4, 0x02, 0, 60, 0, 2, 106, 98])
        let full = Packet.connect(.init(
            clientID: "jb", keepAlive: 30, username: "u", password: "p",
            will: .init(topic: "t", text: "offline", qos: .atLeastOnce, retain: true))).bytes
        // Flags: user name, password, will retain, will QoS 1, will, clean session.
        #expect(full[9] == 0b1110_1110)
        #expect(full == [0x10, 32, 0, 4, 77, 81, 84, 84, 4, 0xEE, 0, 30, 0, 2, 106, 98,
                         0, 1, 116, 0, 7] + Array("offline".utf8) + [0, 1, 117, 0, 1, 112])
    }

    @Test func publishSubscribeAndTheSmallPacketsAreEncodedAsTheStandardSays() {
        #expect(Packet.publish(.init(topic: "a/b", text: "hi")).bytes == [0x30, 7, 0, 3, 97, 47, 98, 104, 105])
        #expect(Packet.publish(.init(topic: "a", payload: [1], qos: .atLeastOnce, retain: true, packetID: 10)).bytes == [0x33, 6, 0, 1, 97, 0, 10, 1])
        #expect(Packet.subscribe(packetID: 1, topics: [.init("a/#"), .init("b", qos: .atMostOnce)]).bytes == [0x82, 12, 0, 1, 0, 3, 97, 47, 35, 1, 0, 1, 98, 0])
        #expect(Packet.publishAcknowledged(packetID: 258).bytes == [0x40, 2, 1, 2])
        #expect(Packet.pingRequest.bytes == [0xC0, 0])
        #expect(Packet.disconnect.bytes == [0xE0, 0])
    }

    @Test(arguments: [(0, 1), (127, 1), (128, 2), (16_383, 2), (16_384, 3), (200_000, 3)])
    func theRemainingLengthTakesAsFewBytesAsItCan(payload: Int, lengthBytes: Int) throws {
        let publish = Packet.publish(.init(topic: "t", payload: [UInt8](repeating: 7, count: max(0, payload - 3))))
        let bytes = publish.bytes
        #expect(bytes.count == 1 + lengthBytes + max(3, payload), "\(payload)")
        #expect(try decodeAll(bytes, decoder: .init(maxPacketSize: 1 << 20)) == [publish])
    }

    // MARK: What a broker sends

    static let stream: [UInt8] =
        [0x20, 2, 0, 0] +                                   // CONNACK
        [0x90, 4, 0, 1, 1, 0x80] +                          // SUBACK: QoS 1, refused
        [0x32, 9, 0, 3, 97, 47, 98, 0, 5, 111, 110] +       // PUBLISH QoS 1 "a/b" id 5 "on"
        [0x31, 6, 0, 1, 99, 123, 125, 10] +                 // PUBLISH retained "c" "{}\n"
        [0x40, 2, 0, 7] +                                   // PUBACK 7
        [0xD0, 0]                                           // PINGRESP

    static let expected: [Packet] = [
        .connectionAccepted(sessionPresent: false),
        .subscribeAcknowledged(packetID: 1, granted: [.atLeastOnce, nil]),
        .publish(.init(topic: "a/b", payload: Array("on".utf8), qos: .atLeastOnce, packetID: 5)),
        .publish(.init(topic: "c", payload: Array("{}\n".utf8), retain: true)),
        .publishAcknowledged(packetID: 7),
        .pingResponse,
    ]

    @Test func aBrokersPacketsAreReadHoweverTheyAreSplit() throws {
        for split in 0...Self.stream.count {
            var buffer = ByteBuffer(bytes: Self.stream[..<split])
            var packets: [Packet] = []
            let decoder = MQTTPacketDecoder()
            while let packet = try decoder.next(from: &buffer) { packets.append(packet) }
            buffer.writeBytes(Self.stream[split...])
            while let packet = try decoder.next(from: &buffer) { packets.append(packet) }
            #expect(packets == Self.expected, "split at \(split)")
            #expect(buffer.readableBytes == 0)
        }
    }

    @Test func everyRefusalOfTheConnectionIsNamed() throws {
        #expect(try decodeAll([0x20, 2, 1, 0]) == [.connectionAccepted(sessionPresent: true)])
        for code in UInt8(1)...5 {
            let packets = try decodeAll([0x20, 2, 0, code])
            guard case .connectionRefused(let refused)? = packets.first else { Issue.record("\(packets)"); continue }
            #expect(refused.rawValue == code && !refused.description.isEmpty)
        }
        #expect(Packet.ConnectReturnCode.badUsernameOrPassword.description.contains("passwordFile"))
    }

    @Test func malformedPacketsAreRefusedWithTheReason() {
        let cases: [([UInt8], String)] = [
            ([0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "a remaining length longer than four bytes"),
            ([0x30, 0xFF, 0xFF, 0xFF, 0x7F], "a packet of 268435455 bytes, over the 262144 accepted"),
            ([0x30, 5, 0, 9, 97, 98, 99], "a PUBLISH topic longer than its packet"),
            ([0x36, 4, 0, 1, 97, 0], "a PUBLISH with QoS 3 (this client subscribes with QoS 0 and 1 only)"),
            ([0x34, 5, 0, 1, 97, 0, 1], "a PUBLISH with QoS 2 (this client subscribes with QoS 0 and 1 only)"),
            ([0x32, 5, 0, 1, 97, 0, 0], "a QoS 1 PUBLISH without a packet id"),
            ([0x32, 3, 0, 1, 97], "a QoS 1 PUBLISH without a packet id"),
            ([0x30, 3, 0, 0, 1], "a PUBLISH with an empty topic"),
            ([0x30, 4, 0, 2, 0xC3, 0x28], "a PUBLISH topic that is not UTF-8 text"),
            ([0x30, 4, 0, 2, 97, 0], "a PUBLISH topic that is not UTF-8 text"),
            ([0x30, 4, 0, 2, 97, 35], "a PUBLISH to a topic with a wildcard"),
            ([0x20, 3, 0, 0, 0], "a CONNACK of 3 bytes (it has 2)"),
            ([0x21, 2, 0, 0], "a CONNACK with flags 1 (they must be 0)"),
            ([0x20, 2, 2, 0], "a CONNACK with reserved bits set"),
            ([0x20, 2, 0, 6], "a CONNACK with return code 6"),
            ([0x40, 1, 0], "a PUBACK of 1 bytes (it has 2)"),
            ([0x90, 2, 0, 1], "a SUBACK of 2 bytes (it has at least 3)"),
            ([0x90, 3, 0, 1, 2], "a SUBACK with return code 2"),
            ([0xD0, 1, 0], "a PINGRESP of 1 bytes (it has 0)"),
            ([0x00, 0], "a packet of reserved type 0"),
            ([0xF0, 0], "a packet of reserved type 15"),
            ([0x10, 0], "a packet of type 1, which a broker does not send this client"),
            ([0x82, 0], "a packet of type 8, which a broker does not send this client"),
            ([0x50, 2, 0, 1], "a packet of type 5, which a broker does not send this client"),
        ]
        for (bytes, reason) in cases {
            #expect(refusal(bytes) == reason, "\(bytes)")
        }
        // The limit itself: at it, read; one over, refused before a byte of it is held.
        let decoder = MQTTPacketDecoder(maxPacketSize: 10)
        #expect(refusal([0x30, 10, 0, 1, 97] + [UInt8](repeating: 1, count: 7), decoder: decoder) == nil)
        #expect(refusal([0x30, 11], decoder: decoder) == "a packet of 11 bytes, over the 10 accepted")
    }

    @Test func aTruncatedPacketWaitsForTheRest() throws {
        var buffer = ByteBuffer(bytes: [0x32, 9, 0, 3, 97, 47])
        #expect(try MQTTPacketDecoder().next(from: &buffer) == nil)
        #expect(buffer.readableBytes == 6, "nothing is consumed until the packet is whole")
    }

    /// Mutated broker streams, split at random: every packet is read or the stream refused
    /// with a reason; never a crash, and never more bytes consumed than were there.
    @Test func mutatedBrokerStreamsAreReadOrRefused() {
        var random = SeededGenerator(seed: 14)
        var refused = 0
        for _ in 0..<3000 {
            let stream = Mutations.mutate(Self.stream, using: &random)
            let split = Int(random.next() % UInt64(stream.count + 1))
            var buffer = ByteBuffer(bytes: stream[..<split])
            let decoder = MQTTPacketDecoder()
            do {
                while try decoder.next(from: &buffer) != nil {}
                buffer.writeBytes(stream[split...])
                while try decoder.next(from: &buffer) != nil {}
                #expect(buffer.readableBytes <= stream.count)
            } catch {
                refused += 1
                #expect(!error.reason.isEmpty)
            }
        }
        #expect(refused > 0, "some mutations break the stream")
    }
}
