@testable import ESPHomeAPI
import Testing

extension Array where Element == UInt8 {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self = bytes
    }
}

/// Noise_NNpsk0_25519_ChaChaPoly_SHA256 against the vector Noise's reference implementation
/// (cacophony) publishes, byte for byte, in both roles; then what a wrong key or a changed
/// message does.
@Suite struct NoiseHandshakeTests {
    /// cacophony's vector for this protocol (vectors/cacophony.txt).
    enum Vector {
        static let prologue = [UInt8](hex: "4a6f686e2047616c74")
        static let psk = [UInt8](hex: "54686973206973206d7920417573747269616e20706572737065637469766521")
        static let initiatorEphemeral = [UInt8](hex: "893e28b9dc6ca8d611ab664754b8ceb7bac5117349a4439a6b0569da977c464a")
        static let responderEphemeral = [UInt8](hex: "bbdb4cdbd309f1a1f2e1456967fe288cadd6f712d65dc7b7793d5e63da6b375b")
        static let handshakeHash = [UInt8](hex: "f4d03dc34495c95729ea6de9e1b59004b59733102488b3e24bc441e0be208eaf")
        static let messages: [(payload: [UInt8], ciphertext: [UInt8])] = [
            ([UInt8](hex: "4c756477696720766f6e204d69736573"),
             [UInt8](hex: "ca35def5ae56cec33dc2036731ab14896bc4c75dbb07a61f879f8e3afa4c794479b962b8aff8485742ac32f905ba45369e2465fb59e138a93d67a0d1266b6a54")),
            ([UInt8](hex: "4d757272617920526f746862617264"),
             [UInt8](hex: "95ebc60d2b1fa672c1f46a8aa265ef51bfe38e7ccb39ec5be34069f144808843d6062704d5a9c422a8e834423f8c1feada7e8d0d910a1a2cd030fb584221e3")),
            ([UInt8](hex: "462e20412e20486179656b"), [UInt8](hex: "e632c3763d7669067383433197a3baddf146e9e70ad4b4e9e59e0f")),
            ([UInt8](hex: "4361726c204d656e676572"), [UInt8](hex: "64c6bee32ea91c8474bb4c21d7a700109ad45af77b29764ba5eb1e")),
        ]
    }

    func pair(initiatorPSK: [UInt8] = Vector.psk, prologue: [UInt8] = Vector.prologue) throws -> (NoiseHandshake, NoiseHandshake) {
        (try NoiseHandshake(role: .initiator, psk: initiatorPSK, prologue: prologue, ephemeral: Vector.initiatorEphemeral),
         try NoiseHandshake(role: .responder, psk: Vector.psk, prologue: Vector.prologue, ephemeral: Vector.responderEphemeral))
    }

    @Test func bothRolesMatchThePublishedVector() throws {
        var (initiator, responder) = try pair()
        let first = try initiator.writeFirst(payload: Vector.messages[0].payload)
        #expect(first == Vector.messages[0].ciphertext)
        #expect(try responder.readFirst(first) == Vector.messages[0].payload)
        let second = try responder.writeSecond(payload: Vector.messages[1].payload)
        #expect(second == Vector.messages[1].ciphertext)
        #expect(try initiator.readSecond(second) == Vector.messages[1].payload)
        #expect(initiator.hash == Vector.handshakeHash)
        #expect(responder.hash == Vector.handshakeHash)

        // Transport: the initiator's message, then the responder's.
        var (initiatorSend, initiatorReceive) = try initiator.split()
        var (responderSend, responderReceive) = try responder.split()
        let third = try initiatorSend.encrypt(Vector.messages[2].payload)
        #expect(third == Vector.messages[2].ciphertext)
        #expect(try responderReceive.decrypt(third) == Vector.messages[2].payload)
        let fourth = try responderSend.encrypt(Vector.messages[3].payload)
        #expect(fourth == Vector.messages[3].ciphertext)
        #expect(try initiatorReceive.decrypt(fourth) == Vector.messages[3].payload)
    }

    @Test func anotherKeyFailsTheFirstMessage() throws {
        var (initiator, responder) = try pair(initiatorPSK: [UInt8](repeating: 7, count: 32))
        let first = try initiator.writeFirst()
        #expect(throws: NoiseError.authenticationFailed) { try responder.readFirst(first) }
    }

    @Test func anotherPrologueFailsTheFirstMessage() throws {
        var (initiator, responder) = try pair(prologue: Array("NoiseAPIInit".utf8) + [0, 0])
        let first = try initiator.writeFirst()
        #expect(throws: NoiseError.authenticationFailed) { try responder.readFirst(first) }
    }

    @Test func aChangedTransportMessageIsRefusedAndTheCountKept() throws {
        var (initiator, responder) = try pair()
        _ = try responder.readFirst(initiator.writeFirst())
        _ = try initiator.readSecond(responder.writeSecond())
        var (send, _) = try initiator.split()
        var (_, receive) = try responder.split()
        var sealed = try send.encrypt(Array("volume".utf8))
        sealed[0] ^= 1
        #expect(throws: NoiseError.authenticationFailed) { try receive.decrypt(sealed) }
        #expect(receive.count == 0, "a refused message does not move the count")
        sealed[0] ^= 1
        #expect(try receive.decrypt(sealed) == Array("volume".utf8))
        #expect(receive.count == 1)
    }

    @Test func aShortOrOutOfOrderMessageIsRefused() throws {
        var (initiator, responder) = try pair()
        #expect(throws: NoiseError.malformedMessage) { try responder.readFirst([UInt8](repeating: 1, count: 47)) }
        #expect(throws: NoiseError.outOfOrder) { try initiator.readSecond([UInt8](repeating: 1, count: 48)) }
        #expect(throws: NoiseError.outOfOrder) { try initiator.split() }
    }
}
