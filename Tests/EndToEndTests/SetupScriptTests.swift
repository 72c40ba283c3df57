import Foundation
import JukeboxTestSupport
import Testing

/// The README's two commands check for Swift before anything else, and say in one line what
/// to do when it is missing or too old.
@Suite("Set-up scripts", .timeLimit(.minutes(1)))
struct SetupScriptTests {
    /// `source scripts/require-swift.sh` with `PATH` as given: its exit status and what it said.
    func check(path: String) throws -> (status: Int32, said: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "source scripts/require-swift.sh && echo ready"]
        process.currentDirectoryURL = URL(fileURLWithPath: WebPageTests.repository)
        process.environment = ["PATH": path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, said)
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
