import Foundation
import JukeboxProtocol
import JukeboxTestSupport
import Subprocess
import Testing

/// The README's two commands check for Swift before anything else, and say in one line what
/// to do when it is missing or too old.
@Suite("Set-up scripts", .timeLimit(.minutes(1)))
struct SetupScriptTests {
    /// `bash ARGUMENTS` from the repository: its exit status, and what it said on either output.
    /// `PATH` as given, when one is.
    /// Run as a subprocess awaited without holding a thread of the cooperative pool (a script
    /// that makes keys or runs lintian takes seconds).
    static func bash(_ arguments: [String], path: String? = nil) async throws -> (status: Int32, said: String) {
        var environment: Environment = .inherit
        if let path { environment = .custom(["PATH": path]) }
        // From the repository, as the README runs them; both outputs as one.
        let result = try await Subprocess.run(
            .path("/usr/bin/env"), arguments: Arguments(["-C", WebPageTests.repository, "/bin/bash", "-c", #"exec 2>&1; exec /bin/bash "$@""#, "bash"] + arguments),
            environment: environment, platformOptions: TestProcesses.options, input: .none, output: .string(limit: 1 << 20), error: .discarded)
        return (DaemonProcess.status(result.terminationStatus) ?? -1, result.standardOutput)
    }

    /// `source scripts/require-swift.sh` with `PATH` as given: its exit status and what it said.
    func check(path: String) async throws -> (status: Int32, said: String) {
        try await Self.bash(["-c", "source scripts/require-swift.sh && echo ready"], path: path)
    }

    @Test func swiftMissingOrTooOldIsSaidInOneLineWithWhatToDo() async throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.file("old"), withIntermediateDirectories: true)
        // Written by a child, never by this process: a file this process held open for writing
        // could be inherited by a child another test forks at that moment, and running it would
        // then fail with "text file busy".
        let made = try await Self.bash(["-c", #"printf '#!/bin/sh\necho "Swift version 6.1.2 (swift-6.1.2-RELEASE)"\n' > "$1" && chmod 755 "$1""#, "make", folder.file("old/swift")])
        #expect(made.status == 0, "\(made.said)")
        // A PATH with nothing on it: wherever this machine's swift is, it is not found.
        let missing = try await check(path: folder.file("nothing"))
        #expect(missing.status == 69)
        #expect(missing.said.hasPrefix("/bin/bash: there is no swift command on PATH: install Swift 6.2 or later (the toolchain for Debian 12 from https://www.swift.org/install/linux/"), "\(missing.said)")
        #expect(missing.said.split(separator: "\n").count == 1)
        let old = try await check(path: folder.file("old") + ":/usr/bin:/bin")
        #expect(old.status == 69)
        #expect(old.said.contains("/old/swift is Swift 6.1, older than jukeboxd needs: install Swift 6.2 or later"), "\(old.said)")
        // The toolchain the tests run with passes.
        let real = try await check(path: ProcessInfo.processInfo.environment["PATH"] ?? "")
        #expect(real.status == 0 && real.said == "ready\n", "\(real.said)")
    }
}

/// The release workflow's first step: the tag must be the version the source and the changelog
/// say, in a copy of the files it reads, changed as a release may get them wrong.
@Suite("Release check", .timeLimit(.minutes(1)))
struct ReleaseCheckTests {
    func check(_ tag: String, version: String = JukeboxVersion.source, changelog: String) async throws -> (status: Int32, said: String) {
        let folder = try TemporaryDirectory()
        let manager = FileManager.default
        for path in ["scripts", "Sources/JukeboxProtocol", "packaging/deb"] {
            try manager.createDirectory(atPath: folder.file(path), withIntermediateDirectories: true)
        }
        try manager.copyItem(atPath: WebPageTests.repository + "/scripts/release-check.sh", toPath: folder.file("scripts/release-check.sh"))
        try folder.write("Sources/JukeboxProtocol/Version.swift", text: "public enum JukeboxVersion {\n    public static let source = \"\(version)\"\n}\n")
        try folder.write("packaging/deb/changelog", text: changelog)
        return try await SetupScriptTests.bash([folder.file("scripts/release-check.sh"), tag])
    }

    func entry(_ version: String, _ distribution: String = "unstable") -> String {
        "jukeboxd (\(version)) \(distribution); urgency=medium\n\n  * A release.\n\n -- jukeboxd authors <jukeboxd@example.org>  Tue, 24 Nov 2026 12:00:00 +0000\n"
    }

    @Test func theTagMustBeTheSourcesVersionAndTheChangelogs() async throws {
        let version = JukeboxVersion.source
        let right = try await check("v\(version)", changelog: entry(version))
        #expect(right.status == 0 && right.said == "release-check: v\(version) is jukeboxd \(version), as the source and the changelog say\n", "\(right.said)")
        let other = try await check("v9.9.9", changelog: entry(version))
        #expect(other.status == 65 && other.said.contains("the tag v9.9.9 is not v\(version)"), "\(other.said)")
        let bare = try await check(version, changelog: entry(version))
        #expect(bare.status == 65 && bare.said.contains("tag the release v\(version)"), "\(bare.said)")
        let behind = try await check("v2.0.0", version: "2.0.0", changelog: entry(version))
        #expect(behind.status == 65 && behind.said.contains("first entry is \(version), not 2.0.0: add an entry for 2.0.0"), "\(behind.said)")
        let unreleased = try await check("v\(version)", changelog: entry(version, "UNRELEASED"))
        #expect(unreleased.status == 65 && unreleased.said.contains("UNRELEASED"), "\(unreleased.said)")
        // Without a tag, the version the packages are numbered with, released or not; a
        // changelog behind the source stops that too.
        let printed = try await check("", changelog: entry(version, "UNRELEASED"))
        #expect(printed.status == 0 && printed.said == "\(version)\n", "\(printed.said)")
        let untagged = try await check("", version: "2.0.0", changelog: entry(version))
        #expect(untagged.status == 65 && untagged.said.contains("add an entry for 2.0.0"), "\(untagged.said)")
        // The source as it is: its own tag passes.
        #expect(try await SetupScriptTests.bash(["scripts/release-check.sh", "v\(version)"]).status == 0)
    }
}

/// The release scripts never run their data and never publish a secret: the keyring
/// package's address is a plain URL kept as data in its postinst, and `apt-repo.sh` refuses a
/// GNUPGHOME, or any secret key, inside the folder it publishes.
@Suite("Release scripts", .timeLimit(.minutes(2)))
struct ReleaseScriptTests {
    let folder: TemporaryDirectory
    init() throws { folder = try TemporaryDirectory() }

    /// `bash -c SCRIPT` from the repository, with GNUPGHOME in the test's folder.
    func run(_ script: String) async throws -> (status: Int32, said: String) {
        try await SetupScriptTests.bash(["-c", "export GNUPGHOME='\(folder.file("gnupg"))'; \(script)"])
    }

    @Test func theKeyringPackagesAddressIsAPlainURLKeptAsData() async throws {
        try FileManager.default.createDirectory(atPath: folder.file("gnupg"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let made = try await run("gpg --batch --pinentry-mode loopback --passphrase '' --quick-generate-key 'test key' ed25519 sign never && gpg --batch --export 'test key' > '\(folder.file("key.pgp"))'")
        #expect(made.status == 0, "\(made.said)")
        let mark = folder.file("MARK")
        for url in ["https://example.org/apt/$(touch \(mark))", "https://example.org/`touch \(mark)`", "https://example.org/$HOME", "https://example.org/a b", "ftp://example.org/apt", "https://example.org/it's"] {
            let quoted = "'" + url.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
            let refused = try await run("scripts/keyring-package.sh '\(folder.file("key.pgp"))' '\(folder.file("out"))' \(quoted)")
            #expect(refused.status == 65, "\(url): \(refused.said)")
            #expect(refused.said.contains("is not a plain http:// or https:// address"), "\(url): \(refused.said)")
        }
        #expect(!FileManager.default.fileExists(atPath: mark), "nothing in an address ran")
        // A plain address with an IPv6 host and a port goes into the source word for word,
        // under DPKG_ROOT, and the postinst runs nothing of it.
        let url = "https://[2001:db8::1]:8443/jukeboxd/apt"
        let built = try await run("scripts/keyring-package.sh '\(folder.file("key.pgp"))' '\(folder.file("out"))' '\(url)' | tail -n 1")
        #expect(built.status == 0, "\(built.said)")
        let deb = try #require(built.said.split(separator: "\n").last.map(String.init))
        let root = folder.file("root")
        try FileManager.default.createDirectory(atPath: root + "/etc/apt/sources.list.d", withIntermediateDirectories: true)
        try folder.write("root/etc/os-release", text: "VERSION_CODENAME=bookworm\n")
        let installed = try await run("dpkg-deb -e '\(deb)' '\(folder.file("control"))' && DPKG_ROOT='\(root)' sh '\(folder.file("control/postinst"))' configure")
        #expect(installed.status == 0, "\(installed.said)")
        let sources = try String(contentsOfFile: root + "/etc/apt/sources.list.d/jukeboxd.sources", encoding: .utf8)
        #expect(sources == "Types: deb\nURIs: \(url)\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/jukeboxd-archive-keyring.pgp\n", "\(sources)")
    }

    @Test func aSecretKeyIsNeverPublished() async throws {
        let repo = folder.file("repo")
        try folder.write("dummy.deb", text: "")
        // GNUPGHOME inside the published folder: refused before any key is made.
        let inside = try await SetupScriptTests.bash(["-c", "GNUPGHOME='\(repo)/gnupg' scripts/apt-repo.sh --new-key '\(repo)' '\(folder.file("dummy.deb"))'"])
        #expect(inside.status == 78, "\(inside.said)")
        #expect(inside.said.contains("is inside \(repo), which is published"), "\(inside.said)")
        #expect(!FileManager.default.fileExists(atPath: repo + "/gnupg"), "no key was made")
        // Secret key material left in the folder, in each of its forms.
        try FileManager.default.createDirectory(atPath: folder.file("gnupg"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let made = try await run("gpg --batch --pinentry-mode loopback --passphrase '' --quick-generate-key 'test key' ed25519 sign never && gpg --batch --pinentry-mode loopback --passphrase '' --export-secret-keys 'test key' > '\(folder.file("secret.gpg"))'")
        #expect(made.status == 0, "\(made.said)")
        let leftovers: [(String, String)] = [
            ("backup/secret.asc", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nxx\n-----END PGP PRIVATE KEY BLOCK-----\n"),
            ("old/private-keys-v1.d/ABC.key", "(private-key)"),
            ("old/secring.gpg", ""),
        ]
        for (path, text) in leftovers {
            try? FileManager.default.removeItem(atPath: repo)
            try FileManager.default.createDirectory(atPath: repo + "/" + (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: repo + "/" + path, atomically: false, encoding: .utf8)
            let refused = try await run("scripts/apt-repo.sh --new-key '\(repo)' '\(folder.file("dummy.deb"))'")
            #expect(refused.status == 78, "\(path): \(refused.said)")
            #expect(refused.said.contains("\(repo)/\(path) holds a secret key"), "\(path): \(refused.said)")
        }
        // A keyring holding the secret key, named as a public one would be.
        try? FileManager.default.removeItem(atPath: repo)
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: folder.file("secret.gpg"), toPath: repo + "/extra-keyring.gpg")
        let keyring = try await run("scripts/apt-repo.sh --key 'test key' '\(repo)' '\(folder.file("dummy.deb"))'")
        #expect(keyring.status == 78 && keyring.said.contains("extra-keyring.gpg holds a secret key"), "\(keyring.said)")
    }
}

/// The README's demo takes its options in any order and checks them before the long build;
/// its list of jukeboxd's options is jukeboxd's own.
@Suite("Demo options", .timeLimit(.minutes(1)))
struct DemoOptionTests {
    @Test func theDemoKnowsJukeboxdsOptionsAndChecksThemFirst() async throws {
        let help = try await DaemonProcess.run(["--help"])
        // jukeboxd's options, as its help lists them ("--name <value>" or "--name").
        var theirs: [String] = []
        // The option lines of its OPTIONS section ("  --name <value>  what it does").
        let section = help.stdout.components(separatedBy: "OPTIONS:").last ?? ""
        for line in section.split(separator: "\n") where line.drop(while: { $0 == " " }).hasPrefix("-") {
            let words = line.split(separator: " ")
            guard let first = words.first(where: { $0.hasPrefix("--") }) else { continue }
            let name = String(first.trimmingCharacters(in: CharacterSet(charactersIn: ",")))
            guard !["--help", "--version"].contains(name) else { continue }
            let takes = words.dropFirst(words.firstIndex(of: first)! - words.startIndex + 1).first?.hasPrefix("<") ?? false
            theirs.append(takes ? name + "=" : name)
        }
        let script = try String(contentsOfFile: WebPageTests.repository + "/scripts/demo.sh", encoding: .utf8)
        let line = try #require(script.split(separator: "\n").first { $0.hasPrefix("jukeboxd_options=") })
        let ours = line.dropFirst("jukeboxd_options=\"".count).dropLast().split(separator: " ").map(String.init)
        #expect(Set(ours) == Set(theirs), "demo.sh: \(ours); jukeboxd --help: \(theirs)")
        // Help, and a wrong option, are answered before anything is installed or built.
        let usage = try await SetupScriptTests.bash(["scripts/demo.sh", "--help"])
        #expect(usage.status == 0 && usage.said.contains("scripts/demo.sh [--no-sound-card] [SESSION]"), "\(usage.said)")
        let wrong = try await SetupScriptTests.bash(["scripts/demo.sh", "--duration", "10s", "--no-such-option"])
        #expect(wrong.status == 64 && wrong.said.contains("jukeboxd has no option --no-such-option"), "\(wrong.said)")
        let short = try await SetupScriptTests.bash(["scripts/demo.sh", "--no-sound-card", "--duration"])
        #expect(short.status == 64 && short.said.contains("--duration needs a value"), "\(short.said)")
        let missing = try await SetupScriptTests.bash(["scripts/demo.sh", "nowhere.json", "--no-sound-card"])
        #expect(missing.status == 66 && missing.said.contains("nowhere.json: no such session file"), "\(missing.said)")
    }
}
