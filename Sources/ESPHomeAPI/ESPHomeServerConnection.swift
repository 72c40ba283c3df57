/// The server's side of one connection of ESPHome's native API, with no I/O: bytes in, and
/// messages and bytes to write out. With a key, the client's hello, the server's hello (its
/// name and MAC address), the Noise handshake, then sealed messages; without one, plaintext
/// frames.
public struct ESPHomeServerConnection: Sendable {
    /// What the server's hello says of the device.
    public struct Identity: Sendable, Equatable {
        public var name: String
        public var macAddress: String
        public init(name: String, macAddress: String) {
            self.name = name
            self.macAddress = macAddress
        }
    }

    /// One message from the client.
    public struct Message: Sendable, Equatable {
        public var type: UInt16
        public var data: [UInt8]
    }

    /// Why the connection is refused. Its words are for the log; what the client is told
    /// is in the bytes to write.
    public enum Refusal: Error, Equatable, Sendable {
        case frame(ESPHomeFrameError)
        case wrongKey
        case malformedHandshake
        case plaintextToKeyedDevice
        case encryptedToPlaintextDevice
        case unreadableMessage
        case unknownType(UInt16)

        public var words: String {
            switch self {
            case .frame(let error): error.words
            case .wrongKey: "its encryption key is not this device's: give Home Assistant the session's esphome.encryptionKey"
            case .malformedHandshake: "its handshake was malformed"
            case .plaintextToKeyedDevice: "it sent plaintext, and this device has an encryption key: give Home Assistant the key"
            case .encryptedToPlaintextDevice: "it uses encryption, and the session's esphome section has no encryptionKey"
            case .unreadableMessage: "a message failed its authentication or was shorter than its header"
            case .unknownType(let type): "it sent a message of type \(type), which no client sends"
            }
        }
    }

    /// What a `receive` brought: bytes to write (in order, before anything else), the
    /// client's messages, and a refusal after which the connection is to be closed once the
    /// bytes are written.
    public struct Received: Sendable {
        public var write: [[UInt8]] = []
        public var messages: [Message] = []
        public var refusal: Refusal?
    }

    /// The explanation ESPHome gives for a wrong key; aioesphomeapi reports it as one.
    public static let wrongKeyExplanation = "Handshake MAC failure"
    public static let prologue = Array("NoiseAPIInit".utf8) + [0, 0]
    /// The largest message data a sealed frame can hold: the frame less the 4-byte header
    /// and the 16-byte tag.
    public static let maxSealedData = ESPHomeFrameReader.maxFrameBytes - 4 - 16

    private enum State {
        case hello(NoiseHandshake)
        case handshake(NoiseHandshake)
        case ready(send: NoiseCipherState, receive: NoiseCipherState)
        case plaintext
        case refused
    }

    private var reader = ESPHomeFrameReader()
    private var state: State
    private let identity: Identity

    /// `psk`: the 32-byte key, or nil for plaintext.
    public init(psk: [UInt8]?, identity: Identity) throws {
        self.identity = identity
        if let psk {
            state = .hello(try NoiseHandshake(role: .responder, psk: psk, prologue: Self.prologue))
        } else {
            state = .plaintext
        }
    }

    /// True once messages may be sent: after the handshake, or at once in plaintext.
    public var isReady: Bool {
        switch state {
        case .ready, .plaintext: true
        default: false
        }
    }

    /// Bytes received and not yet part of a frame.
    public var waitingBytes: Int { reader.waitingBytes }

    public mutating func receive(_ bytes: some Sequence<UInt8>) -> Received {
        var received = Received()
        if case .refused = state { return received }
        reader.append(bytes)
        while received.refusal == nil {
            let frame: ESPHomeFrame?
            do {
                frame = try reader.next()
            } catch {
                refuse(.frame(error), into: &received)
                break
            }
            guard let frame else { break }
            handle(frame, into: &received)
        }
        return received
    }

    private mutating func handle(_ frame: ESPHomeFrame, into received: inout Received) {
        switch (state, frame) {
        case (.refused, _):
            return
        case (.plaintext, .plaintext(let type, let data)):
            accept(Message(type: type, data: data), into: &received)
        case (.plaintext, .encrypted):
            // aioesphomeapi reads a plaintext frame as "the device is using plaintext".
            received.write.append(ESPHomeFrameWriter.plaintext(type: ESPHomeMessageType.disconnectRequest, data: []))
            refuse(.encryptedToPlaintextDevice, into: &received)
        case (_, .plaintext):
            // aioesphomeapi reads an encrypted frame as "the connection requires encryption".
            received.write.append(ESPHomeFrameWriter.encrypted([0x01] + Array("Bad indicator byte".utf8)))
            refuse(.plaintextToKeyedDevice, into: &received)
        case (.hello(let handshake), .encrypted):
            // The client's hello says nothing this server needs; the answer is protocol 1
            // (Noise), the name and the MAC address.
            let hello = [0x01] + Array(identity.name.utf8) + [0] + Array(identity.macAddress.utf8) + [0]
            received.write.append(ESPHomeFrameWriter.encrypted(hello))
            state = .handshake(handshake)
        case (.handshake(var handshake), .encrypted(let payload)):
            guard payload.first == 0x00 else {
                reject("Handshake error", .malformedHandshake, into: &received)
                return
            }
            do {
                _ = try handshake.readFirst(Array(payload.dropFirst()))
                let answer = try handshake.writeSecond()
                received.write.append(ESPHomeFrameWriter.encrypted([0x00] + answer))
                let ciphers = try handshake.split()
                state = .ready(send: ciphers.send, receive: ciphers.receive)
            } catch NoiseError.authenticationFailed {
                reject(Self.wrongKeyExplanation, .wrongKey, into: &received)
            } catch {
                reject("Handshake error", .malformedHandshake, into: &received)
            }
        case (.ready(let send, var receive), .encrypted(let payload)):
            guard let plain = try? receive.decrypt(payload), plain.count >= 4,
                  Int(plain[2]) << 8 | Int(plain[3]) == plain.count - 4
            else {
                refuse(.unreadableMessage, into: &received)
                return
            }
            state = .ready(send: send, receive: receive)
            accept(Message(type: UInt16(plain[0]) << 8 | UInt16(plain[1]), data: Array(plain.dropFirst(4))), into: &received)
        }
    }

    private mutating func accept(_ message: Message, into received: inout Received) {
        guard ESPHomeMessageType.fromClients.contains(message.type) else {
            refuse(.unknownType(message.type), into: &received)
            return
        }
        received.messages.append(message)
    }

    /// A handshake refused with ESPHome's words, so the client can say what is wrong.
    private mutating func reject(_ explanation: String, _ refusal: Refusal, into received: inout Received) {
        received.write.append(ESPHomeFrameWriter.encrypted([0x01] + Array(explanation.utf8)))
        refuse(refusal, into: &received)
    }

    private mutating func refuse(_ refusal: Refusal, into received: inout Received) {
        received.refusal = refusal
        state = .refused
    }

    /// The frame for one message to the client, sealed once the handshake is done.
    public mutating func frame(type: UInt16, data: [UInt8]) throws -> [UInt8] {
        switch state {
        case .plaintext:
            return ESPHomeFrameWriter.plaintext(type: type, data: data)
        case .ready(var send, let receive):
            precondition(data.count <= Self.maxSealedData, "a message of \(data.count) bytes does not fit a frame")
            let header: [UInt8] = [UInt8(type >> 8), UInt8(type & 0xFF), UInt8(data.count >> 8), UInt8(data.count & 0xFF)]
            let sealed = try send.encrypt(header + data)
            state = .ready(send: send, receive: receive)
            return ESPHomeFrameWriter.encrypted(sealed)
        default:
            throw NoiseError.outOfOrder
        }
    }
}
