import Glibc
import JukeboxCore
import JukeboxProtocol

/// Where the web remote listens and its password: `--http`, `--http-password-file`, the
/// session's `http` section, and systemd's `$CREDENTIALS_DIRECTORY/web-password`.
struct WebOptions {
    /// The password file may be this long at most.
    static let maxPasswordFileSize = 4096

    let listen: String?
    let passwordFile: String?

    /// The settings and password to serve with, or nil when the web remote is off.
    func resolve(_ session: Session, environment: [String: String] = ProcessEnvironment.current) throws(WebOptionsError) -> (settings: WebSettings, password: String?)? {
        var settings = session.web
        if let listen {
            guard let given = WebSettings(listen: listen) else {
                throw WebOptionsError(message: "--http \(listen): expected HOST:PORT, such as 0.0.0.0:8080 or 127.0.0.1:8080", exitCode: 64)
            }
            // The address changes; the password and HTTPS settings stay the session's.
            var merged = settings ?? given
            (merged.host, merged.port) = (given.host, given.port)
            settings = merged
        }
        guard var settings else { return nil }
        if let passwordFile { settings.passwordFile = passwordFile }
        var credential: String?
        if let folder = environment["CREDENTIALS_DIRECTORY"], access(folder + "/web-password", R_OK) == 0 { credential = folder + "/web-password" }
        var password: String?
        if let path = settings.passwordFile ?? credential { password = try Self.readPassword(path, kind: "web") }
        if password == nil, !settings.isLoopback {
            throw WebOptionsError(
                message: "the web remote on \(settings.listen) would be open to the whole network without a password: put one in a file only jukeboxd's user can read (chmod 600) and name it with --http-password-file or \"passwordFile\" in the session's http section (under systemd, LoadCredential=web-password:FILE), or listen on 127.0.0.1 only",
                exitCode: 78)
        }
        return (settings, password)
    }

    /// The first line of the file, without its line break. `kind`: whose password (`web`, `MQTT`).
    static func readPassword(_ path: String, kind: String) throws(WebOptionsError) -> String {
        let bytes: [UInt8]
        do {
            bytes = try FilePath.read(path, limit: maxPasswordFileSize)
        } catch {
            throw WebOptionsError(message: "the \(kind) password file \(path): \(error)", exitCode: 78)
        }
        let line = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false).first.map(Array.init) ?? []
        let password = String(decoding: line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : line, as: UTF8.self)
        guard !password.isEmpty else { throw WebOptionsError(message: "the \(kind) password file \(path) is empty", exitCode: 78) }
        return password
    }
}

struct WebOptionsError: StartFailure, CustomStringConvertible {
    var message: String
    var exitCode: Int32
    var description: String { message }
}

/// The MQTT broker's password: the session's `mqtt.passwordFile`, or systemd's
/// `$CREDENTIALS_DIRECTORY/mqtt-password`.
enum MQTTOptions {
    static func resolve(_ session: Session, environment: [String: String] = ProcessEnvironment.current) throws(WebOptionsError) -> (settings: MQTTSettings, password: String?)? {
        guard let settings = session.mqtt else { return nil }
        var credential: String?
        if let folder = environment["CREDENTIALS_DIRECTORY"], access(folder + "/mqtt-password", R_OK) == 0 { credential = folder + "/mqtt-password" }
        let password = try (settings.passwordFile ?? credential).map { path throws(WebOptionsError) in try WebOptions.readPassword(path, kind: "MQTT") }
        return (settings, password)
    }
}
