import Crypto
import _CryptoExtras

/// A slow salted hash of the web remote's password (PBKDF2 with HMAC-SHA-256), as the
/// sessions file keeps it: enough to tell whether the password is still the same, and slow to
/// guess the password from if the file is copied.
public struct PasswordHash: Sendable, Equatable {
    /// OWASP's figure for PBKDF2-HMAC-SHA-256 (2023): about 0.2 s on a Raspberry Pi 4, once
    /// at start-up and once at the first login.
    public static let rounds = 600_000
    /// Rounds a file may ask for: fewer would be quick to guess through, and more would let a
    /// damaged file hold the start-up for minutes.
    static let acceptedRounds = 100_000...10_000_000

    public let rounds: Int
    /// Hex.
    public let salt: String
    /// Hex, 32 bytes.
    public let hash: String

    public var method: String { "pbkdf2-sha256:\(rounds)" }

    /// A new hash of `password`, with a new 16-byte salt.
    init?(password: [UInt8], rounds: Int) {
        var random = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0 ... .max, using: &random) }
        guard let hash = Self.derive(password, salt: salt, rounds: rounds) else { return nil }
        self.rounds = rounds
        self.salt = Self.hex(salt)
        self.hash = Self.hex(hash)
    }

    /// The hash as the file states it; nil when it is not one this daemon writes.
    init?(method: String, salt: String, hash: String) {
        guard method.hasPrefix("pbkdf2-sha256:"), let rounds = Int(method.dropFirst("pbkdf2-sha256:".count)),
              Self.acceptedRounds.contains(rounds), Self.bytes(salt)?.count == 16, Self.bytes(hash)?.count == 32 else { return nil }
        self.rounds = rounds
        self.salt = salt
        self.hash = hash
    }

    /// Whether `password` gives this hash (compared in constant time). Slow: call it off the
    /// cooperative pool.
    func matches(_ password: [UInt8]) -> Bool {
        guard let salt = Self.bytes(salt), let expected = Self.bytes(hash), let made = Self.derive(password, salt: salt, rounds: rounds) else { return false }
        return WebAuth.equalInConstantTime(made, expected)
    }

    private static func derive(_ password: [UInt8], salt: [UInt8], rounds: Int) -> [UInt8]? {
        guard let key = try? KDF.Insecure.PBKDF2.deriveKey(from: password, salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: rounds) else { return nil }
        return key.withUnsafeBytes { Array($0) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    static func bytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
