import Foundation
import Glibc
import JukeboxProtocol
import Testing

@Suite("Control socket path")
struct SocketPathTests {
    @Test func resolutionOrder() {
        let env = ["JUKEBOX_SOCKET": "/srv/j.sock", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(SocketPath.resolve(explicit: "/x.sock", environment: env, uid: 1000) == "/x.sock")
        #expect(SocketPath.resolve(explicit: nil, environment: env, uid: 1000) == "/srv/j.sock")
        #expect(SocketPath.resolve(explicit: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000) == "/run/user/1000/jukeboxd.sock")
        #expect(SocketPath.resolve(explicit: nil, environment: [:], uid: 0) == "/run/jukeboxd/jukeboxd.sock")
        #expect(SocketPath.resolve(explicit: nil, environment: [:], uid: 1000) == "/tmp/jukeboxd-1000/jukeboxd.sock")
        #expect(SocketPath.resolve(explicit: nil, environment: ["JUKEBOX_SOCKET": ""], uid: 7) == "/tmp/jukeboxd-7/jukeboxd.sock")
    }

    @Test func clientKeepsWhatWasConfigured() {
        #expect(SocketPath.resolveForClient(explicit: "/nonexistent/x.sock", environment: [:], uid: 1000) == "/nonexistent/x.sock")
        #expect(SocketPath.resolveForClient(explicit: nil, environment: ["JUKEBOX_SOCKET": "/nonexistent/y.sock"], uid: 1000) == "/nonexistent/y.sock")
    }
}

@Suite("Unix socket addresses")
struct UnixSocketAddressTests {
    @Test func pathsAbstractNamesAndLimits() {
        var path = UnixSocketAddress("/run/jukeboxd/jukeboxd.sock")!
        #expect(path.withSockaddr { $0.pointee.sa_family == sa_family_t(AF_UNIX) && $1 == socklen_t(MemoryLayout<sockaddr_un>.size) })
        // "@name": the abstract namespace, exactly family + NUL + name.
        var abstract = UnixSocketAddress("@/org/freedesktop/systemd1/notify")!
        #expect(abstract.withSockaddr { $1 } == socklen_t(MemoryLayout<sa_family_t>.size + 33))
        #expect(UnixSocketAddress(String(repeating: "x", count: 200)) == nil)
        #expect(UnixSocketAddress("") == nil)
    }
}

@Suite("Private socket folder")
struct PrivateSocketFolderTests {
    @Test func onlyARealFolderOfTheUserThatNobodyElseCanWriteIsAccepted() throws {
        var template = Array("/tmp/jukebox-folder-XXXXXX".utf8CString)
        let base = String(cString: try #require(mkdtemp(&template)))
        defer { _ = try? FileManager.default.removeItem(atPath: base) }
        let me = UInt32(geteuid())
        #expect(SocketPath.checkPrivateFolder(base + "/missing", uid: me) == nil, "made when needed")
        #expect(SocketPath.checkPrivateFolder(base, uid: me) == nil)
        chmod(base, 0o757)
        #expect(SocketPath.checkPrivateFolder(base, uid: me) == "\(base) is writable by others (mode 757)")
        chmod(base, 0o700)
        #expect(SocketPath.checkPrivateFolder(base, uid: me + 1)?.contains("belongs to") == true)
        symlink(base, base + "-link")
        defer { unlink(base + "-link") }
        #expect(SocketPath.checkPrivateFolder(base + "-link", uid: me) == "\(base)-link is a symbolic link, not a folder of your own")
    }
}
