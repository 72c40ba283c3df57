import Crypto
import FoundationEssentials
import JukeboxCore
import SwiftASN1
import X509

#if canImport(Glibc)
import Glibc
#endif

/// The web remote's own certificate authority and the server certificate it signs, kept in a
/// folder beside the state file (`state.tls/`, mode 0700, every file 0600):
/// - `ca.crt`, `ca.key`: the authority a phone is told to trust once. It is valid for ten
///   years and may sign names under `.local`, `localhost` and the host's own name only, so
///   its key could not be used to pass off any other site to a phone that trusts it.
/// - `server.crt`, `server.key`: what HTTPS serves, for the host name, `HOST.local`,
///   `localhost` and every address of the machine. It is valid for 397 days (what Apple's
///   and Google's browsers accept) and made again 30 days before it ends, or as soon as the
///   machine has a name or address it does not cover.
///
/// Blocking file I/O: call from a `BlockingWorkQueue`, never the cooperative pool.
public struct WebCertificateStore: Sendable {
    public static let caLifetime: TimeInterval = 3650 * 86400
    public static let serverLifetime: TimeInterval = 397 * 86400
    public static let renewBefore: TimeInterval = 30 * 86400
    /// A certificate starts an hour before it is made, for clocks a little behind.
    static let backdate: TimeInterval = 3600
    /// A certificate or key file is at most this long.
    static let maxFileSize = 64 * 1024

    public let folder: String
    public var caCertificatePath: String { folder + "/ca.crt" }
    var caKeyPath: String { folder + "/ca.key" }
    var serverCertificatePath: String { folder + "/server.crt" }
    var serverKeyPath: String { folder + "/server.key" }

    public init(folder: String) {
        self.folder = folder
    }

    /// Where a daemon whose state file is `statePath` keeps them.
    public static func folder(besideState statePath: String) -> String {
        StateFile.sibling(of: statePath, ".tls")
    }

    /// What there is, made or renewed as needed: the authority when there is none (or it is
    /// unreadable or ending), the server certificate when there is none, it is due, or it
    /// does not cover `names`.
    public func prepare(names: ServerNames, now: Date) throws(WebCertificateError) -> WebIdentity {
        try makeFolder()
        var madeAuthority = false
        var keptAside: WebIdentity.KeptAside?
        let authority: (certificate: Certificate, key: P256.Signing.PrivateKey)
        switch loadAuthority() {
        case .loaded(let existing) where existing.certificate.notValidAfter.timeIntervalSince(now) > Self.serverLifetime:
            authority = existing
        case .damaged(let reason):
            // Never written over: the old key may be wanted back (from a backup of the rest).
            keptAside = WebIdentity.KeptAside(paths: moveAside([caCertificatePath, caKeyPath], now: now), reason: reason)
            authority = try makeAuthority(hostName: names.hostName, now: now)
            madeAuthority = true
        default:
            authority = try makeAuthority(hostName: names.hostName, now: now)
            madeAuthority = true
        }
        let wanted = names.permitted(by: authority.certificate)
        var server = madeAuthority ? nil : loadServer()
        var renewed = false
        if server == nil || !Self.covers(server!.certificate, wanted) || !Self.issued(server!.certificate, by: authority.certificate)
            || server!.certificate.notValidAfter.timeIntervalSince(now) <= Self.renewBefore || server!.certificate.notValidBefore > now {
            server = try makeServer(for: wanted, authority: authority, now: now)
            renewed = true
        }
        return try WebIdentity(
            chainPEM: [Self.pem(server!.certificate), Self.pem(authority.certificate)], keyPEM: server!.keyPEM,
            notAfter: server!.certificate.notValidAfter, names: wanted.described,
            covered: CoveredNames(dnsNames: wanted.dnsNames, addresses: wanted.addresses),
            authority: WebIdentity.Authority(path: caCertificatePath, fingerprint: Self.fingerprint(authority.certificate), notAfter: authority.certificate.notValidAfter),
            madeAuthority: madeAuthority, renewed: renewed, keptAside: keptAside)
    }

    /// A certificate (the server's first, then its chain) and key of the user's own, checked
    /// to belong together.
    public static func own(certificate path: String, key keyPath: String, now: Date) throws(WebCertificateError) -> WebIdentity {
        func read(_ path: String, _ field: String) throws(WebCertificateError) -> String {
            do {
                return String(decoding: try FilePath.read(path, limit: maxFileSize), as: UTF8.self)
            } catch {
                throw WebCertificateError(message: "http.\(field): cannot read \(path): \(error)")
            }
        }
        let chainText = try read(path, "certificate")
        let keyText = try read(keyPath, "key")
        guard let documents = try? PEMDocument.parseMultiple(pemString: chainText).filter({ $0.discriminator == "CERTIFICATE" }), !documents.isEmpty,
              let certificates = try? documents.map({ try Certificate(pemDocument: $0) })
        else {
            throw WebCertificateError(message: "http.certificate: \(path) holds no certificate in PEM form (-----BEGIN CERTIFICATE-----)")
        }
        guard let key = try? Certificate.PrivateKey(pemEncoded: keyText) else {
            throw WebCertificateError(message: "http.key: \(keyPath) holds no private key in PEM form (-----BEGIN PRIVATE KEY-----, EC or RSA)")
        }
        guard key.publicKey == certificates[0].publicKey else {
            throw WebCertificateError(message: "http.key: \(keyPath) is not the key of the certificate in \(path); give the key that was made with it")
        }
        let names = ((try? certificates[0].extensions.subjectAlternativeNames).map { $0.map(ServerNames.text(of:)) } ?? []).joined(separator: ", ")
        return WebIdentity(
            chainPEM: documents.map(\.pemString), keyPEM: keyText, notAfter: certificates[0].notValidAfter,
            names: names.isEmpty ? "\(certificates[0].subject)" : names, covered: CoveredNames(of: certificates[0]), authority: nil)
    }

    // MARK: - Reading

    enum LoadedAuthority {
        /// Neither file is there: the first start.
        case missing
        /// A file is there and cannot be used: why, in plain words.
        case damaged(String)
        case loaded((certificate: Certificate, key: P256.Signing.PrivateKey))
    }

    private func loadAuthority() -> LoadedAuthority {
        let present = [caCertificatePath, caKeyPath].filter { (path: String) in access(path, F_OK) == 0 }
        guard !present.isEmpty else { return .missing }
        guard present.count == 2 else { return .damaged("\(present[0]) is there without \(present[0] == caKeyPath ? "ca.crt" : "ca.key")") }
        guard let certificate = try? Certificate(pemEncoded: String(decoding: FilePath.read(caCertificatePath, limit: Self.maxFileSize), as: UTF8.self)) else {
            return .damaged("\(caCertificatePath) is not a certificate in PEM form")
        }
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: String(decoding: FilePath.read(caKeyPath, limit: Self.maxFileSize), as: UTF8.self)) else {
            return .damaged("\(caKeyPath) is not a P-256 private key in PEM form")
        }
        guard certificate.publicKey == Certificate.PublicKey(key.publicKey) else {
            return .damaged("\(caKeyPath) is not the key of \(caCertificatePath)")
        }
        return .loaded((certificate, key))
    }

    /// Renames each of `paths` that is there to `PATH.corrupt-TIME`; the new names.
    private func moveAside(_ paths: [String], now: Date) -> [String] {
        paths.compactMap { path in try? FilePath.keepAside(path, epochSeconds: Int64(now.timeIntervalSince1970)) }
    }

    private func loadServer() -> (certificate: Certificate, keyPEM: String)? {
        guard let certificate = try? Certificate(pemEncoded: String(decoding: FilePath.read(serverCertificatePath, limit: Self.maxFileSize), as: UTF8.self)),
              let key = try? P256.Signing.PrivateKey(pemRepresentation: String(decoding: FilePath.read(serverKeyPath, limit: Self.maxFileSize), as: UTF8.self)),
              certificate.publicKey == Certificate.PublicKey(key.publicKey)
        else { return nil }
        return (certificate, key.pemRepresentation)
    }

    static func covers(_ certificate: Certificate, _ names: ServerNames) -> Bool {
        guard let present = try? certificate.extensions.subjectAlternativeNames else { return false }
        let have = Set(present.map { "\($0)" })
        return names.generalNames.allSatisfy { have.contains("\($0)") }
    }

    static func issued(_ certificate: Certificate, by authority: Certificate) -> Bool {
        certificate.issuer == authority.subject && authority.publicKey.isValidSignature(certificate.signature, for: certificate)
    }

    // MARK: - Making

    private func makeAuthority(hostName: String, now: Date) throws(WebCertificateError) -> (certificate: Certificate, key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let name = try Self.attempt("make the certificate authority") {
            try DistinguishedName {
                OrganizationName("jukeboxd")
                CommonName("jukeboxd on \(hostName) \(Self.shortDate(now))")
            }
        }
        let publicKey = Certificate.PublicKey(key.publicKey)
        let certificate = try Self.attempt("make the certificate authority") {
            try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
                notValidBefore: now - Self.backdate, notValidAfter: now + Self.caLifetime,
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                    Critical(NameConstraints(permittedDNSDomains: ServerNames.permittedDomains(hostName: hostName)))
                    SubjectKeyIdentifier(keyIdentifier: Self.keyIdentifier(publicKey))
                },
                issuerPrivateKey: Certificate.PrivateKey(key))
        }
        // The key first: a certificate without its key is made again, never the reverse.
        try write(Array(key.pemRepresentation.utf8), to: caKeyPath)
        try write(Array(Self.pem(certificate).utf8), to: caCertificatePath)
        return (certificate, key)
    }

    private func makeServer(
        for names: ServerNames, authority: (certificate: Certificate, key: P256.Signing.PrivateKey), now: Date
    ) throws(WebCertificateError) -> (certificate: Certificate, keyPEM: String) {
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let certificate = try Self.attempt("make the server certificate") {
            try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
                notValidBefore: now - Self.backdate,
                notValidAfter: min(now + Self.serverLifetime, authority.certificate.notValidAfter),
                issuer: authority.certificate.subject,
                subject: try DistinguishedName { CommonName(names.dnsNames.first ?? "localhost") },
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.serverAuth])
                    SubjectAlternativeNames(names.generalNames)
                    SubjectKeyIdentifier(keyIdentifier: Self.keyIdentifier(publicKey))
                    AuthorityKeyIdentifier(keyIdentifier: Self.keyIdentifier(authority.certificate.publicKey))
                },
                issuerPrivateKey: Certificate.PrivateKey(authority.key))
        }
        try write(Array(key.pemRepresentation.utf8), to: serverKeyPath)
        try write(Array(Self.pem(certificate).utf8), to: serverCertificatePath)
        return (certificate, key.pemRepresentation)
    }

    private func makeFolder() throws(WebCertificateError) {
        do {
            try FilePath.makeFolders(folder)
        } catch {
            throw WebCertificateError(message: "cannot make a folder for the web remote's certificates: \(error)")
        }
        var info = stat()
        guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw WebCertificateError(message: "\(folder) is not a folder: move it away, and jukeboxd makes its certificates there")
        }
        // Only jukeboxd's user may read the keys, whatever made the folder or its files.
        if info.st_mode & 0o777 != 0o700 { chmod(folder, 0o700) }
        for path in [caCertificatePath, caKeyPath, serverCertificatePath, serverKeyPath] {
            var file = stat()
            if lstat(path, &file) == 0, file.st_mode & S_IFMT == S_IFREG, file.st_mode & 0o077 != 0 { chmod(path, 0o600) }
        }
    }

    private func write(_ bytes: [UInt8], to path: String) throws(WebCertificateError) {
        do {
            try AtomicFile.write(bytes, to: path, mode: 0o600)
        } catch {
            throw WebCertificateError(message: "cannot save the web remote's certificate as \(path): \(error)")
        }
    }

    // MARK: - Encoding

    static func pem(_ certificate: Certificate) throws(WebCertificateError) -> String {
        try attempt("write a certificate") { try certificate.serializeAsPEM().pemString + "\n" }
    }

    static func der(_ certificate: Certificate) throws(WebCertificateError) -> [UInt8] {
        try attempt("write a certificate") {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
    }

    /// SHA-256 of the DER form, as `AB:CD:…`: what `openssl x509 -fingerprint -sha256` and
    /// phones' certificate screens show.
    public static func fingerprint(_ certificate: Certificate) throws(WebCertificateError) -> String {
        SHA256.hash(data: try der(certificate)).map { byte in
            let text = String(byte, radix: 16, uppercase: true)
            return text.count == 1 ? "0" + text : text
        }.joined(separator: ":")
    }

    /// The first 20 bytes of the SHA-256 of the public key.
    static func keyIdentifier(_ key: Certificate.PublicKey) -> ArraySlice<UInt8> {
        ArraySlice(SHA256.hash(data: key.subjectPublicKeyInfoBytes).prefix(20))
    }

    static func shortDate(_ date: Date) -> String {
        let day = Int((date.timeIntervalSince1970 / 86400).rounded(.down))
        let civil = CivilDate(daysSinceEpoch: day)
        return civil.description
    }

    private static func attempt<T>(_ doing: String, _ body: () throws -> T) throws(WebCertificateError) -> T {
        do { return try body() } catch { throw WebCertificateError(message: "cannot \(doing) for the web remote: \(error)") }
    }
}

/// What HTTPS serves, and the authority that signed it.
public struct WebIdentity: Sendable {
    public struct Authority: Sendable, Equatable {
        /// Where `ca.crt` is, to download or copy to a phone.
        public var path: String
        public var fingerprint: String
        public var notAfter: Date
    }

    /// The server certificate first, then the authority's.
    public var chainPEM: [String]
    public var keyPEM: String
    public var notAfter: Date
    /// The names and addresses it serves, for the log.
    public var names: String
    /// The same, for the plain-HTTP redirect to check a request's `Host` against.
    var covered: CoveredNames
    /// nil for a certificate of the user's own (`http.certificate`).
    public var authority: Authority?
    public var madeAuthority = false
    public var renewed = false
    /// The authority's files that could not be used and were kept aside before a new one
    /// was made.
    public var keptAside: KeptAside?

    public struct KeptAside: Sendable, Equatable {
        public var paths: [String]
        public var reason: String
    }
}

public struct WebCertificateError: StartFailure, Sendable {
    public var message: String
    public var description: String { message }
    public let exitCode: Int32 = 73
}
