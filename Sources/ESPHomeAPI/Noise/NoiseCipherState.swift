import Crypto

/// Why a Noise handshake or message was refused.
public enum NoiseError: Error, Equatable, Sendable {
    /// A message failed its authentication tag: another key, or changed on the way.
    case authenticationFailed
    /// A handshake message of the wrong size.
    case malformedMessage
    /// 2^64 − 1 messages under one key: the key may not be used again.
    case nonceExhausted
    /// A step out of the pattern's order.
    case outOfOrder
}

/// Noise's CipherState with ChaChaPoly: a key and the count of messages under it (the nonce,
/// little-endian after 4 zero bytes, as the Noise specification says for ChaChaPoly).
public struct NoiseCipherState: Sendable {
    private let key: SymmetricKey
    /// The next message's nonce.
    public private(set) var count: UInt64 = 0

    public init(key: [UInt8]) {
        self.key = SymmetricKey(data: key)
    }

    private func nonce() throws -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[4 + index] = UInt8(truncatingIfNeeded: count >> (8 * UInt64(index))) }
        return try ChaChaPoly.Nonce(data: bytes)
    }

    /// The ciphertext and its 16-byte tag.
    public mutating func encrypt(_ plaintext: [UInt8], associatedData: [UInt8] = []) throws -> [UInt8] {
        guard count < UInt64.max else { throw NoiseError.nonceExhausted }
        let box = try ChaChaPoly.seal(plaintext, using: key, nonce: nonce(), authenticating: associatedData)
        count += 1
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// The plaintext; the count moves on only when the tag is right, so a refused message
    /// leaves the state as it was.
    public mutating func decrypt(_ ciphertext: [UInt8], associatedData: [UInt8] = []) throws -> [UInt8] {
        guard count < UInt64.max else { throw NoiseError.nonceExhausted }
        guard ciphertext.count >= 16 else { throw NoiseError.authenticationFailed }
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: nonce(), ciphertext: ciphertext.dropLast(16), tag: ciphertext.suffix(16))
            let plaintext = try ChaChaPoly.open(box, using: key, authenticating: associatedData)
            count += 1
            return Array(plaintext)
        } catch {
            throw NoiseError.authenticationFailed
        }
    }
}
