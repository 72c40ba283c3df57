import Foundation
import JukeboxProtocol
import JukeboxTestSupport
import Testing

/// The README's two commands check for Swift before anything else, and say in one line what
/// to do when it is missing or too old.
@Suite("Set-up scripts", .timeLimit(.minutes(1)))
struct SetupScriptTests {
    /// `bash ARGUMENTS` from the repository: its exit status, and what it said on either output.
    /// `PATH` as given, when one is.
    static func bash(_ arguments: [String], path: String? = nil) throws -> (status: Int32, said: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: WebPageTests.repository)
        if let path { process.environment = ["PATH": path] }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, said)
    }

    /// `source scripts/require-swift.sh` with `PATH` as given: its exit status and what it said.
    func check(path: String) throws -> (status: Int32, said: String) {
        try Self.bash(["-c", "source scripts/require-swift.sh && echo ready"], path: path)
    }

    @Test func swiftMissingOrTooOldIsSaidInOneLineWithWhatToDo() throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.file("old"), withIntermediateDirectories: true)
        try folder.write("old/swift", text: "#!/bin/sh\necho 'Swift version 6.1.2 (swift-6.1.2-RELEASE)'\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.file("old/swift"))
        // A PATH with nothing on it: wherever this machine's swift is, it is not found.
        let missing = try check(path: folder.file("nothing"))
        #expect(missing.status == 69)
        #expect(missing.said.hasPrefix("/bin/bash: there is no swift command on PATH: install Swift 6.2 or later (the toolchain for Debian 12 from https://www.swift.org/install/linux/"), "\(missing.said)")
        #expect(missing.said.split(separator: "\n").count == 1)
        let old = try check(path: folder.file("old") + ":/usr/bin:/bin")
        #expect(old.status == 69)
        #expect(old.said.contains("/old/swift is Swift 6.1, older than jukeboxd needs: install Swift 6.2 or later"), "\(old.said)")
        // The toolchain the tests run with passes.
        let real = try check(path: ProcessInfo.processInfo.environment["PATH"] ?? "")
        #expect(real.status == 0 && real.said == "ready\n", "\(real.said)")
    }
}

/// The release workflow's first step: the tag must be the version the source and the changelog
/// say, in a copy of the files it reads, changed as a release may get them wrong.
@Suite("Release check", .timeLimit(.minutes(1)))
struct ReleaseCheckTests {
    func check(_ tag: String, version: String = JukeboxVersion.source, changelog: String) throws -> (status: Int32, said: String) {
        let folder = try TemporaryDirectory()
        let manager = FileManager.default
        for path in ["scripts", "Sources/JukeboxProtocol", "packaging/deb"] {
            try manager.createDirectory(atPath: folder.file(path), withIntermediateDirectories: true)
        }
        try manager.copyItem(atPath: WebPageTests.repository + "/scripts/release-check.sh", toPath: folder.file("scripts/release-check.sh"))
        try folder.write("Sources/JukeboxProtocol/Version.swift", text: "public enum JukeboxVersion {\n    public static let source = \"\(version)\"\n}\n")
        try folder.write("packaging/deb/changelog", text: changelog)
        return try SetupScriptTests.bash([folder.file("scripts/release-check.sh"), tag])
    }

    func entry(_ version: String, _ distribution: String = "unstable") -> String {
        "jukeboxd (\(version)) \(distribution); urgency=medium\n\n  * A release.\n\n -- jukeboxd authors <jukeboxd@example.org>  Tue, 24 Nov 2026 12:00:00 +0000\n"
    }

    @Test func theTagMustBeTheSourcesVersionAndTheChangelogs() throws {
        let version = JukeboxVersion.source
        let right = try check("v\(version)", changelog: entry(version))
        #expect(right.status == 0 && right.said == "release-check: v\(version) is jukeboxd \(version), as the source and the changelog say\n", "\(right.said)")
        let other = try check("v9.9.9", changelog: entry(version))
        #expect(other.status == 65 && other.said.contains("the tag v9.9.9 is not v\(version)"), "\(other.said)")
        let bare = try check(version, changelog: entry(version))
        #expect(bare.status == 65 && bare.said.contains("tag the release v\(version)"), "\(bare.said)")
        let behind = try check("v2.0.0", version: "2.0.0", changelog: entry(version))
        #expect(behind.status == 65 && behind.said.contains("first entry is \(version), not 2.0.0: add an entry for 2.0.0"), "\(behind.said)")
        let unreleased = try check("v\(version)", changelog: entry(version, "UNRELEASED"))
        #expect(unreleased.status == 65 && unreleased.said.contains("UNRELEASED"), "\(unreleased.said)")
        // Without a tag, the version the packages are numbered with, released or not; a
        // changelog behind the source stops that too.
        let printed = try check("", changelog: entry(version, "UNRELEASED"))
        #expect(printed.status == 0 && printed.said == "\(version)\n", "\(printed.said)")
        let untagged = try check("", version: "2.0.0", changelog: entry(version))
        #expect(untagged.status == 65 && untagged.said.contains("add an entry for 2.0.0"), "\(untagged.said)")
        // The source as it is: its own tag passes.
        #expect(try SetupScriptTests.bash(["scripts/release-check.sh", "v\(version)"]).status == 0)
    }
}
