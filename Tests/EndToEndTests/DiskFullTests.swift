import Foundation
import JukeboxTestSupport
import Subprocess
import Testing

/// A full disk used to read as a read error ("cannot be read (error 28)"), with a hint about
/// folder permissions, and an upload that hit it was answered 400, blaming the client. The
/// clips, the session and the state here live on a small tmpfs that the test fills.
@Suite("A full disk", .timeLimit(.minutes(1)), .enabled(if: getuid() == 0, "mounting a small tmpfs needs root (CI runs as root)"))
struct DiskFullTests {
    let folder: TemporaryDirectory
    var disk: String { folder.file("disk") }

    init() throws {
        folder = try TemporaryDirectory()
    }

    @Test func aFullDiskIsNamedAndNothingIsLostOrLeftBehind() async throws {
        #expect(mkdir(disk, 0o700) == 0)
        let mounted = try await Subprocess.run(.path("/usr/bin/mount"), arguments: ["-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", .init(disk)], platformOptions: TestProcesses.options, output: .discarded, error: .string(limit: 4096))
        try #require(mounted.terminationStatus.isSuccess, "mount: \(mounted.standardError)")
        defer { _ = umount2(disk, Int32(MNT_DETACH)) }
        let tone = WAVFile.bytes(Array(repeating: 0.2, count: 800), encoding: .s16, rate: 8000, channels: 1)
        try Data(tone).write(to: URL(fileURLWithPath: disk + "/a.wav"))
        let session = #"{ "interval": { "min": "1h", "max": "1h" }, "http": { "listen": "127.0.0.1:0", "https": false }, "clips": [ { "file": "a.wav" } ] }"#
        try session.write(toFile: disk + "/s.json", atomically: false, encoding: .utf8)
        let arguments = [disk + "/s.json", "--socket", folder.file("c.sock"), "--state", disk + "/state.json", "--device", "null"]
        let run = try await DaemonProcess.withDaemon(arguments, ready: "web remote listening on") { [disk] log in
            let line = await log.lines.first { $0.contains("web remote listening on") } ?? ""
            let base = "http://127.0.0.1:" + (line.split(separator: "(port ").last.map { String($0.dropLast()) } ?? "")
            // Fill the disk to the last byte.
            let filler = open(disk + "/filler", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            let block = [UInt8](repeating: 7, count: 4096)
            while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
            #expect(errno == ENOSPC)
            close(filler)
            let upload = try await WebAPITests.curl(["-X", "POST", "\(base)/clips?name=big.wav", "--data-binary", "@-"], input: tone + tone + tone)
            let pause = try await WebAPITests.curl(["-X", "POST", "\(base)/rpc", "--data-binary", #"{"jsonrpc":"2.0","id":1,"method":"pause"}"#])
            let edit = try await WebAPITests.curl(["-X", "POST", "\(base)/rpc", "--data-binary", #"{"jsonrpc":"2.0","id":2,"method":"updateClip","params":{"id":"a","title":"Renamed"}}"#])
            // Room again: the same change is saved.
            unlink(disk + "/filler")
            let again = try await WebAPITests.curl(["-X", "POST", "\(base)/rpc", "--data-binary", #"{"jsonrpc":"2.0","id":3,"method":"pause"}"#])
            return (upload, pause, edit, again, await log.lines)
        }
        let (upload, pause, edit, again, lines) = run.result
        #expect(upload.status == 500, "the daemon's side failed, not the client's: \(upload.status)")
        #expect(upload.body.contains("cannot store big.wav in the clips folder \(disk): no space left on the device that holds it"), "\(upload.body)")
        #expect(upload.body.contains("nothing of it was kept"))
        #expect(pause.body.contains("cannot write the state file \(disk)/state.json: no space left on the device that holds it (`df -h` shows how full it is); it still holds the state last saved"), "\(pause.body)")
        #expect(!pause.body.contains("error 28") && !pause.body.contains("permission"), "\(pause.body)")
        #expect(edit.body.contains(#""reason":"session-not-saved""#) && edit.body.contains("the session file is unchanged: cannot write \(disk)/"), "\(edit.body)")
        #expect(edit.body.contains("no space left on the device") && !edit.body.contains("must be able to write"), "\(edit.body)")
        #expect(again.body.contains(#""paused":true"#), "\(again.body)")
        #expect(lines.contains { $0.contains("cannot write the state file \(disk)/state.json: no space left on the device") })
        #expect(run.status == 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: disk).sorted()
        #expect(left == [".s.json.bak", ".state.json.lock", "a.wav", "s.json", "state.json"] || left == [".state.json.lock", "a.wav", "s.json", "state.json"], "nothing half-written is left: \(left)")
        #expect(try String(contentsOfFile: disk + "/s.json", encoding: .utf8) == session, "the session file is unchanged")
    }
}
