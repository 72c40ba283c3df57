import Crypto

/// The handshake `Noise_NNpsk0_25519_ChaChaPoly_SHA256`, ESPHome's native API encryption:
///
///     -> psk, e
///     <- e, ee
///
/// Both roles, so that the tests can check each against Noise's published vectors. After the
/// second message, `split()` gives the transport's two cipher states.
public struct NoiseHandshake: Sendable {
    public enum Role: Sendable { case initiator, responder }

    public static let protocolName = "Noise_NNpsk0_25519_ChaChaPoly_SHA256"

    private let role: Role
    private let psk: [UInt8]
    private let ephemeral: Curve25519.KeyAgreement.PrivateKey
    private var chainingKey: [UInt8]
    /// The handshake hash `h`, which binds everything said so far.
    public private(set) var hash: [UInt8]
    private var cipher: NoiseCipherState?
    /// The messages written or read so far (0, 1 or 2).
    private var step = 0

    /// `ephemeral` is for tests that follow a vector; a real handshake makes a fresh one.
    public init(role: Role, psk: [UInt8], prologue: [UInt8], ephemeral: [UInt8]? = nil) throws {
        precondition(psk.count == 32, "a Noise pre-shared key is 32 bytes")
        self.role = role
        self.psk = psk
        self.ephemeral = try ephemeral.map { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
            ?? Curve25519.KeyAgreement.PrivateKey()
        // The name is longer than a hash, so h starts as its hash.
        hash = Array(SHA256.hash(data: Array(Self.protocolName.utf8)))
        chainingKey = hash
        mixHash(prologue)
    }

    // MARK: The first message, initiator to responder: psk, e

    public mutating func writeFirst(payload: [UInt8] = []) throws -> [UInt8] {
        guard role == .initiator, step == 0 else { throw NoiseError.outOfOrder }
        step = 1
        mixKeyAndHash(psk)
        let publicKey = Array(ephemeral.publicKey.rawRepresentation)
        mixHash(publicKey)
        mixKey(publicKey)
        return try publicKey + encryptAndHash(payload)
    }

    public mutating func readFirst(_ message: [UInt8]) throws -> [UInt8] {
        guard role == .responder, step == 0 else { throw NoiseError.outOfOrder }
        guard message.count >= 32 + 16 else { throw NoiseError.malformedMessage }
        step = 1
        mixKeyAndHash(psk)
        remoteEphemeral = Array(message.prefix(32))
        mixHash(remoteEphemeral)
        mixKey(remoteEphemeral)
        return try decryptAndHash(Array(message.dropFirst(32)))
    }

    // MARK: The second message, responder to initiator: e, ee

    private var remoteEphemeral: [UInt8] = []

    public mutating func writeSecond(payload: [UInt8] = []) throws -> [UInt8] {
        guard role == .responder, step == 1 else { throw NoiseError.outOfOrder }
        step = 2
        let publicKey = Array(ephemeral.publicKey.rawRepresentation)
        mixHash(publicKey)
        mixKey(publicKey)
        try mixKey(agreement(with: remoteEphemeral))
        return try publicKey + encryptAndHash(payload)
    }

    public mutating func readSecond(_ message: [UInt8]) throws -> [UInt8] {
        guard role == .initiator, step == 1 else { throw NoiseError.outOfOrder }
        guard message.count >= 32 + 16 else { throw NoiseError.malformedMessage }
        step = 2
        remoteEphemeral = Array(message.prefix(32))
        mixHash(remoteEphemeral)
        mixKey(remoteEphemeral)
        try mixKey(agreement(with: remoteEphemeral))
        return try decryptAndHash(Array(message.dropFirst(32)))
    }

    /// The transport's cipher states once both messages are through: what this side sends
    /// with, and what it receives with.
    public func split() throws -> (send: NoiseCipherState, receive: NoiseCipherState) {
        guard step == 2 else { throw NoiseError.outOfOrder }
        let keys = Self.hkdf(chainingKey: chainingKey, input: [], outputs: 2)
        let (first, second) = (NoiseCipherState(key: keys[0]), NoiseCipherState(key: keys[1]))
        return role == .initiator ? (first, second) : (second, first)
    }

    // MARK: Noise's SymmetricState

    private func agreement(with publicKey: [UInt8]) throws -> [UInt8] {
        do {
            let remote = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey)
            let secret = try ephemeral.sharedSecretFromKeyAgreement(with: remote)
            return secret.withUnsafeBytes { Array($0) }
        } catch {
            throw NoiseError.malformedMessage
        }
    }

    private mutating func mixHash(_ data: [UInt8]) {
        hash = Array(SHA256.hash(data: hash + data))
    }

    private mutating func mixKey(_ input: [UInt8]) {
        let keys = Self.hkdf(chainingKey: chainingKey, input: input, outputs: 2)
        chainingKey = keys[0]
        cipher = NoiseCipherState(key: keys[1])
    }

    private mutating func mixKeyAndHash(_ input: [UInt8]) {
        let keys = Self.hkdf(chainingKey: chainingKey, input: input, outputs: 3)
        chainingKey = keys[0]
        mixHash(keys[1])
        cipher = NoiseCipherState(key: keys[2])
    }

    private mutating func encryptAndHash(_ plaintext: [UInt8]) throws -> [UInt8] {
        guard var state = cipher else { throw NoiseError.outOfOrder }
        let ciphertext = try state.encrypt(plaintext, associatedData: hash)
        cipher = state
        mixHash(ciphertext)
        return ciphertext
    }

    private mutating func decryptAndHash(_ ciphertext: [UInt8]) throws -> [UInt8] {
        guard var state = cipher else { throw NoiseError.outOfOrder }
        let plaintext = try state.decrypt(ciphertext, associatedData: hash)
        cipher = state
        mixHash(ciphertext)
        return plaintext
    }

    /// Noise's HKDF: HMAC-SHA256 keyed by the chaining key, then chained outputs.
    static func hkdf(chainingKey: [UInt8], input: [UInt8], outputs: Int) -> [[UInt8]] {
        let temporary = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: chainingKey))))
        var results: [[UInt8]] = []
        var previous: [UInt8] = []
        for index in 1...outputs {
            previous = Array(HMAC<SHA256>.authenticationCode(for: previous + [UInt8(index)], using: temporary))
            results.append(previous)
        }
        return results
    }
}
