import Glibc
import JukeboxTestSupport
import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// Programs run from argument lists (hooks, ffmpeg, a speech engine): no shell ever sees the
/// text they are given, a hang is killed with everything it started, and output is bounded.
@Suite("Running other programs", .timeLimit(.minutes(1)))
struct ChildProcessTests {
    static let hostile = #"$(touch pwned) `touch pwned2` 'single' "double" ; touch pwned3 && echo \"#

    @Test func argumentsAndEnvironmentNeverReachAShell() throws {
        let folder = try TemporaryDirectory()
        let echoed = try ChildProcess.run(["/bin/echo", Self.hostile], timeLimit: .seconds(5))
        #expect(echoed.succeeded)
        #expect(echoed.output == Self.hostile)
        // The test's own shell prints the variable; its value is never run.
        let printed = try ChildProcess.run(
            ["/bin/sh", "-c", "cd \"$1\" && printf '%s' \"$JUKEBOX_CLIP_TITLE\"", "sh", folder.path],
            environment: ["JUKEBOX_CLIP_TITLE": Self.hostile], timeLimit: .seconds(5))
        #expect(printed.output == Self.hostile)
        for name in ["pwned", "pwned2", "pwned3"] { #expect(access(folder.file(name), F_OK) != 0, "\(name) was made") }
    }

    @Test func aProgramThatHangsIsKilledWithWhatItStarted() throws {
        let folder = try TemporaryDirectory()
        // Without the limit the shell would wait out its child's 600 s, past the suite's limit.
        let outcome = try ChildProcess.run(["/bin/sh", "-c", "sleep 600 & echo $! > \"$1\"; wait", "sh", folder.file("child")], timeLimit: .milliseconds(300))
        #expect(outcome.ending == .timedOut)
        let child = try #require(Int32(String(decoding: folder.read("child"), as: UTF8.self).split(separator: "\n").first ?? ""))
        // Killed with its group; reaped by init once orphaned.
        var gone = false
        for _ in 0..<200 where !gone {
            gone = kill(child, 0) != 0 || (try? String(decoding: FilePath.read("/proc/\(child)/stat", limit: 4096), as: UTF8.self).contains(") Z ")) == true
            if !gone { usleep(10_000) }
        }
        #expect(gone, "the hook's own child \(child) was left running")
    }

    @Test func outputIsBoundedAndAChattyProgramNeverBlocks() throws {
        let outcome = try ChildProcess.run(["/bin/sh", "-c", "head -c 2000000 /dev/zero | tr '\\0' x; echo; echo done >&2"], timeLimit: .seconds(20), outputLimit: 100)
        #expect(outcome.succeeded)
        #expect(outcome.output.utf8.count <= 100)
    }

    @Test func failuresSayWhat() throws {
        #expect(try ChildProcess.run(["/bin/sh", "-c", "echo no amplifier >&2; exit 3"], timeLimit: .seconds(5)) == .init(ending: .exited(3), output: "no amplifier"))
        #expect(try ChildProcess.run(["/bin/sh", "-c", "kill -TERM $$"], timeLimit: .seconds(5)).ending == .signalled(SIGTERM))
        #expect(throws: ChildProcess.SpawnFailure.self) { try ChildProcess.run(["no-such-program-here"], timeLimit: .seconds(5)) }
        let missing = #expect(throws: ChildProcess.SpawnFailure.self) { try ChildProcess.run(["/nonexistent/gpioset"], timeLimit: .seconds(5)) }
        #expect(missing?.description == "/nonexistent/gpioset could not be started: no such file")
        #expect(missing?.isMissingProgram == true)
        // Input arrives on standard input, then the end of it.
        #expect(try ChildProcess.run(["/bin/cat"], input: Array("Dinner is ready".utf8), timeLimit: .seconds(5)).output == "Dinner is ready")
        // A program that reads none of a large input: the write fails quietly, no SIGPIPE.
        #expect(try ChildProcess.run(["/bin/true"], input: [UInt8](repeating: 65, count: 4 << 20), timeLimit: .seconds(5)).succeeded)
    }

    /// A program that is missing or cannot be run is reported before anything is started, the
    /// same on every libc and under emulation (where posix_spawn's child would just exit 127).
    @Test func aProgramThatCannotRunIsNamedBeforeAnythingStarts() throws {
        let folder = try TemporaryDirectory()
        _ = try folder.write("notes.txt", text: "#!/bin/sh\nexit 0\n")
        let notExecutable = folder.file("notes.txt")
        let refused = #expect(throws: ChildProcess.SpawnFailure.self) { try ChildProcess.run([notExecutable], timeLimit: .seconds(5)) }
        #expect(refused?.errno == EACCES)
        #expect(refused?.isMissingProgram == false)
        #expect(throws: ChildProcess.SpawnFailure.self) { try ChildProcess.run([folder.path], timeLimit: .seconds(5)) }
        // Looked up in PATH as posix_spawnp does: a non-executable file of that name is passed
        // over for a runnable one further on, and "no such program" only when none is.
        #expect(ChildProcess.unrunnable("notes.txt", searching: "\(folder.path):/usr/bin") == EACCES)
        #expect(ChildProcess.unrunnable("sh", searching: "\(folder.path):/bin") == nil)
        #expect(ChildProcess.unrunnable("no-such-program-here", searching: "/bin:/usr/bin") == ENOENT)
        #expect(ChildProcess.unrunnable("/bin/sh/x", searching: nil) == ENOENT)
        #expect(ChildProcess.unrunnable("", searching: nil) == ENOENT)
        #expect(try ChildProcess.run(["sh", "-c", "exit 0"], environment: ["PATH": "\(folder.path):/bin:/usr/bin"], timeLimit: .seconds(5)).succeeded)
    }
}
