import Glibc
@testable import JukeboxFiles
import JukeboxTestSupport
import Testing

/// The folders made on the way to a state file's or a certificate's folder: a relative path
/// (`--state state/s.json`) is made where the daemon was started, never from the root.
@Suite("Folders made on the way to a file")
struct FolderStepsTests {
    @Test func aRelativePathIsMadeFromTheWorkingFolderAndAnAbsoluteOneFromTheRoot() {
        #expect(FilePath.steps(to: "state/s.tls") == ["state", "state/s.tls"])
        #expect(FilePath.steps(to: "./state//s.tls/") == [".", "./state", "./state/s.tls"])
        #expect(FilePath.steps(to: "/var/lib/jukeboxd") == ["/var", "/var/lib", "/var/lib/jukeboxd"])
        #expect(FilePath.steps(to: "/") == [])
    }

    @Test func theFoldersAreMadeOwnerOnly() throws {
        let folder = try TemporaryDirectory()
        try FilePath.makeFolders(folder.file("a/b/c"))
        var info = stat()
        #expect(stat(folder.file("a/b/c"), &info) == 0 && info.st_mode & S_IFMT == S_IFDIR)
        #expect(info.st_mode & 0o777 == 0o700)
    }
}
