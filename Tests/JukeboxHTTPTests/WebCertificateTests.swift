import Foundation
@testable import JukeboxHTTP
import JukeboxTestSupport
import Testing

/// The web remote's own certificate authority and server certificate: what they are for,
/// when they end and are made again (with the time given by the test), their files' modes,
/// and a certificate of the user's own. Each is read back by openssl, not by the code that
/// wrote it.
@Suite("Web remote certificates")
struct WebCertificateTests {
    let folder: TemporaryDirectory
    var store: WebCertificateStore { WebCertificateStore(folder: folder.file("state.tls")) }
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86400
    static let names = ServerNames(hostName: "Kitchen", addresses: [[127, 0, 0, 1], [192, 168, 1, 20], [UInt8](repeating: 0, count: 15) + [1]])

    init() throws { folder = try TemporaryDirectory() }

    func openssl(_ arguments: [String]) async throws -> String {
        let output = try await Tool.run("openssl", arguments)
        #expect(output.status == 0, "openssl \(arguments.joined(separator: " ")): \(output.stderr)")
        return output.stdout
    }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    func text(_ file: String) async throws -> String { try await openssl(["x509", "-noout", "-text", "-in", store.folder + "/" + file]) }

    /// openssl's verdict on the server certificate at `moment`, trusting only the authority.
    func verify(at moment: Date) async throws -> Tool.Output {
        try await Tool.run("openssl", [
            "verify", "-x509_strict", "-purpose", "sslserver", "-attime", "\(Int(moment.timeIntervalSince1970))",
            "-CAfile", store.caCertificatePath, store.folder + "/server.crt",
        ])
    }

    /// What the log offers a phone when the web remote listens on every address: the mDNS
    /// name and the host's, then the addresses, never loopback or link-local.
    @Test func urlsForAPhone() {
        let linkLocal: [UInt8] = [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [7]
        let global: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1]
        let loopback6: [UInt8] = [UInt8](repeating: 0, count: 15) + [1]
        let names = ServerNames(hostName: "Pi", addresses: [[127, 0, 0, 1], loopback6, linkLocal, global, [169, 254, 3, 4], [192, 168, 1, 20]])
        #expect(names.urls(scheme: "https", port: 8080) == [
            "https://pi.local:8080/", "https://pi:8080/", "https://192.168.1.20:8080/", "https://[2001:db8::1]:8080/",
        ])
        #expect(names.urls(scheme: "http", port: 80, limit: 1) == ["http://pi.local:80/"])
    }

    @Test func aFirstStartMakesAnAuthorityAndAServerCertificateForEveryNameAndAddress() async throws {
        let identity = try store.prepare(names: Self.names, now: Self.start)
        #expect(identity.madeAuthority && identity.renewed)
        let server = try await text("server.crt")
        #expect(server.contains("DNS:kitchen, DNS:kitchen.local, DNS:localhost, IP Address:127.0.0.1, IP Address:192.168.1.20, IP Address:0:0:0:0:0:0:0:1"), "\(server)")
        #expect(server.contains("TLS Web Server Authentication"))
        #expect(server.contains("CA:FALSE"))
        let authority = try await text("ca.crt")
        #expect(authority.contains("CA:TRUE, pathlen:0"))
        #expect(authority.contains("Certificate Sign, CRL Sign"))
        // It may sign local names only: not another site's.
        #expect(authority.contains("Permitted:") && authority.contains("DNS:local") && authority.contains("DNS:kitchen"), "\(authority)")
        let verdict = try await verify(at: Self.start)
        #expect(verdict.status == 0 && verdict.stdout.contains(": OK"), "\(verdict.stdout) \(verdict.stderr)")
        // Valid for 397 days from an hour before it was made; the authority for ten years.
        let dates = try await openssl(["x509", "-noout", "-enddate", "-dateopt", "iso_8601", "-in", store.folder + "/server.crt"])
        #expect(dates.contains("2028-02-16 08:00:00Z"), "\(dates)")
        #expect(identity.authority?.notAfter == Self.start + 3650 * Self.day)
        // The fingerprint is openssl's.
        let fingerprint = try await openssl(["x509", "-noout", "-fingerprint", "-sha256", "-in", store.caCertificatePath])
        #expect(fingerprint.trimmingCharacters(in: .whitespacesAndNewlines) == "sha256 Fingerprint=\(identity.authority!.fingerprint)")
    }

    @Test func everyFileIsTheDaemonUsersAlone() throws {
        _ = try store.prepare(names: Self.names, now: Self.start)
        #expect(Self.mode(store.folder) == 0o700)
        for file in ["ca.crt", "ca.key", "server.crt", "server.key"] {
            #expect(Self.mode(store.folder + "/" + file) == 0o600, "\(file)")
        }
        // A folder left open by someone is closed again.
        chmod(store.folder, 0o755)
        _ = try store.prepare(names: Self.names, now: Self.start)
        #expect(Self.mode(store.folder) == 0o700)
    }

    @Test func theServerCertificateIsMadeAgainThirtyDaysBeforeItEndsAndTheAuthorityStays() async throws {
        let first = try store.prepare(names: Self.names, now: Self.start)
        let firstServer = try folder.read("state.tls/server.crt")
        // Under, at and over the renewal point: 397 - 30 = 367 days on.
        for (days, renewed) in [(100.0, false), (366.9, false), (367.0, true)] {
            let later = Self.start + days * Self.day
            let identity = try store.prepare(names: Self.names, now: later)
            #expect(identity.renewed == renewed, "\(days) days on")
            #expect(!identity.madeAuthority)
            #expect(identity.authority == first.authority, "the authority stays")
            if renewed {
                #expect(try folder.read("state.tls/server.crt") != firstServer)
                #expect(identity.notAfter == later + 397 * Self.day)
                #expect(try await verify(at: later).status == 0)
            } else {
                #expect(try folder.read("state.tls/server.crt") == firstServer)
            }
        }
        // Past the old one's end it would be refused; the new one is served.
        #expect(try await verify(at: Self.start + 400 * Self.day).status == 0)
    }

    @Test func aNewAddressGetsANewCertificateAndARenamedHostKeepsItsLocalName() async throws {
        _ = try store.prepare(names: Self.names, now: Self.start)
        var moved = Self.names
        moved.addresses.append([10, 0, 0, 7])
        let identity = try store.prepare(names: moved, now: Self.start + Self.day)
        #expect(identity.renewed)
        #expect(try await text("server.crt").contains("IP Address:10.0.0.7"))
        // The authority may not sign the new bare name; `.local` it may.
        let renamed = ServerNames(hostName: "pantry", addresses: moved.addresses)
        let again = try store.prepare(names: renamed, now: Self.start + 2 * Self.day)
        #expect(again.renewed && !again.madeAuthority)
        let server = try await text("server.crt")
        #expect(server.contains("DNS:pantry.local, DNS:localhost") && !server.contains("DNS:pantry,"), "\(server)")
        #expect(try await verify(at: Self.start + 2 * Self.day).status == 0)
    }

    @Test func damagedOrMissingFilesAreMadeAgain() async throws {
        let first = try store.prepare(names: Self.names, now: Self.start)
        // A server key that is not the certificate's: a new server certificate, the same authority.
        try folder.write("state.tls/server.key", text: "garbage")
        let second = try store.prepare(names: Self.names, now: Self.start)
        #expect(second.renewed && !second.madeAuthority && second.authority == first.authority)
        // No authority: a new one, and a server certificate it signed.
        unlink(store.caCertificatePath)
        let third = try store.prepare(names: Self.names, now: Self.start)
        #expect(third.madeAuthority && third.renewed && third.authority != first.authority)
        #expect(try await verify(at: Self.start).status == 0)
        // An authority with a year left is replaced before the server certificate would outlive it.
        let late = try store.prepare(names: Self.names, now: Self.start + (3650 - 300) * Self.day)
        #expect(late.madeAuthority)
    }

    @Test func aFileWhereTheFolderShouldBeIsAClearError() throws {
        try folder.write("state.tls", text: "not a folder")
        #expect {
            try store.prepare(names: Self.names, now: Self.start)
        } throws: { error in
            "\(error)".contains("state.tls is not a folder: move it away")
        }
    }

    @Test func aCertificateOfTheUsersOwnIsCheckedAgainstItsKey() async throws {
        let certificate = folder.file("own.crt"), key = folder.file("own.key"), other = folder.file("other.key")
        _ = try await openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "30", "-subj", "/CN=jukebox.example.org", "-addext", "subjectAltName=DNS:jukebox.example.org"])
        _ = try await openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", other])
        let identity = try WebCertificateStore.own(certificate: certificate, key: key, now: Date())
        #expect(identity.authority == nil)
        #expect(identity.names == "jukebox.example.org")
        _ = try TLSContextBox.context(for: identity)
        #expect {
            try WebCertificateStore.own(certificate: certificate, key: other, now: Date())
        } throws: { error in
            "\(error)" == "http.key: \(other) is not the key of the certificate in \(certificate); give the key that was made with it"
        }
        #expect {
            try WebCertificateStore.own(certificate: key, key: key, now: Date())
        } throws: { error in
            "\(error)".contains("holds no certificate in PEM form")
        }
        #expect {
            try WebCertificateStore.own(certificate: certificate, key: folder.file("missing.key"), now: Date())
        } throws: { error in
            "\(error)".hasPrefix("http.key: ") && "\(error)".contains("no such file")
        }
    }
}
