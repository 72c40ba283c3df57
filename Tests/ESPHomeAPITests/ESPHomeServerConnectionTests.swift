@testable import ESPHomeAPI
import Testing

/// The server's side of a connection, driven byte for byte by a client made of the same
/// Noise handshake in the initiator's role.
@Suite struct ESPHomeServerConnectionTests {
    static let key = [UInt8](repeating: 0x42, count: 32)
    static let identity = ESPHomeServerConnection.Identity(name: "desk-speaker", macAddress: "02:11:22:33:44:55")

    /// A client as aioesphomeapi is one: its hello and first handshake message in one write.
    struct Client {
        var handshake: NoiseHandshake
        var reader = ESPHomeFrameReader()
        var ciphers: (send: NoiseCipherState, receive: NoiseCipherState)?

        init(key: [UInt8]) throws {
            handshake = try NoiseHandshake(role: .initiator, psk: key, prologue: ESPHomeServerConnection.prologue)
        }

        mutating func opening() throws -> [UInt8] {
            [0x01, 0x00, 0x00] + ESPHomeFrameWriter.encrypted([0x00] + (try handshake.writeFirst()))
        }

        /// The frames the server wrote.
        mutating func frames(_ written: [[UInt8]]) throws -> [[UInt8]] {
            reader.append(written.joined())
            var frames: [[UInt8]] = []
            while let frame = try reader.next() {
                guard case .encrypted(let payload) = frame else { Issue.record("a plaintext frame"); break }
                frames.append(payload)
            }
            return frames
        }

        mutating func seal(type: UInt16, data: [UInt8]) throws -> [UInt8] {
            let header: [UInt8] = [UInt8(type >> 8), UInt8(type & 0xFF), UInt8(data.count >> 8), UInt8(data.count & 0xFF)]
            return ESPHomeFrameWriter.encrypted(try ciphers!.send.encrypt(header + data))
        }
    }

    @Test func theHandshakeThenSealedMessagesBothWays() throws {
        var server = try ESPHomeServerConnection(psk: Self.key, identity: Self.identity)
        var client = try Client(key: Self.key)
        #expect(!server.isReady)
        let answered = server.receive(try client.opening())
        #expect(answered.refusal == nil && answered.messages.isEmpty)
        let frames = try client.frames(answered.write)
        #expect(frames.count == 2)
        #expect(frames.first == [0x01] + Array("desk-speaker".utf8) + [0] + Array("02:11:22:33:44:55".utf8) + [0])
        #expect(frames.last?.first == 0x00)
        _ = try client.handshake.readSecond(Array(frames[1].dropFirst()))
        client.ciphers = try client.handshake.split()
        #expect(server.isReady)

        // Two messages in one write, then one in pieces.
        let hello = try client.seal(type: ESPHomeMessageType.helloRequest, data: [1, 2])
        let ping = try client.seal(type: ESPHomeMessageType.pingRequest, data: [])
        let both = server.receive(hello + ping)
        #expect(both.messages.map(\.type) == [1, 7])
        #expect(both.messages.first?.data == [1, 2])
        let device = try client.seal(type: ESPHomeMessageType.deviceInfoRequest, data: [])
        #expect(server.receive(device.prefix(5)).messages.isEmpty)
        #expect(server.receive(device.dropFirst(5)).messages.map(\.type) == [9])

        // The server's message opens with the client's cipher.
        let sent = try server.frame(type: ESPHomeMessageType.pingResponse, data: [3])
        let payload = try client.frames([sent])
        let opened = try client.ciphers!.receive.decrypt(payload[0])
        #expect(opened == [0, 8, 0, 1, 3])
    }

    @Test func anotherKeyIsAnsweredWithESPHomesWordsForIt() throws {
        var server = try ESPHomeServerConnection(psk: Self.key, identity: Self.identity)
        var client = try Client(key: [UInt8](repeating: 1, count: 32))
        let answered = server.receive(try client.opening())
        #expect(answered.refusal == .wrongKey)
        let frames = try client.frames(answered.write)
        #expect(frames.last == [0x01] + Array("Handshake MAC failure".utf8))
        #expect(!server.isReady)
        #expect(server.receive(ESPHomeFrameWriter.encrypted([0, 1, 2])).write.isEmpty, "nothing more is read once refused")
    }

    @Test func plaintextToAKeyedDeviceIsAnsweredAsEncryptionRequired() throws {
        var server = try ESPHomeServerConnection(psk: Self.key, identity: Self.identity)
        let answered = server.receive(ESPHomeFrameWriter.plaintext(type: 1, data: []))
        #expect(answered.refusal == .plaintextToKeyedDevice)
        #expect(answered.write.first?.first == 0x01, "an encrypted frame, which aioesphomeapi reads as encryption required")
    }

    @Test func encryptionToAPlaintextDeviceIsAnsweredInPlaintext() throws {
        var server = try ESPHomeServerConnection(psk: nil, identity: Self.identity)
        #expect(server.isReady)
        let answered = server.receive([0x01, 0x00, 0x00])
        #expect(answered.refusal == .encryptedToPlaintextDevice)
        #expect(answered.write.first?.first == 0x00)
    }

    @Test func aTypeNoClientSendsClosesTheConnection() throws {
        var server = try ESPHomeServerConnection(psk: nil, identity: Self.identity)
        let ok = server.receive(ESPHomeFrameWriter.plaintext(type: ESPHomeMessageType.helloRequest, data: []))
        #expect(ok.messages.count == 1 && ok.refusal == nil)
        let answered = server.receive(ESPHomeFrameWriter.plaintext(type: ESPHomeMessageType.helloResponse, data: []))
        #expect(answered.refusal == .unknownType(2))
        #expect(answered.refusal?.words == "it sent a message of type 2, which no client sends")
    }

    @Test func aChangedSealedMessageClosesTheConnection() throws {
        var server = try ESPHomeServerConnection(psk: Self.key, identity: Self.identity)
        var client = try Client(key: Self.key)
        let frames = try client.frames(server.receive(try client.opening()).write)
        _ = try client.handshake.readSecond(Array(frames[1].dropFirst()))
        client.ciphers = try client.handshake.split()
        var sealed = try client.seal(type: ESPHomeMessageType.pingRequest, data: [])
        sealed[4] ^= 0xFF
        #expect(server.receive(sealed).refusal == .unreadableMessage)
    }

    @Test func anOversizedFrameClosesTheConnectionWithItsWords() throws {
        var server = try ESPHomeServerConnection(psk: nil, identity: Self.identity)
        let answered = server.receive([0x00] + ESPHomeFrameWriter.varint(65_536) + [1])
        #expect(answered.refusal == .frame(.tooLarge(65_536)))
    }
}
