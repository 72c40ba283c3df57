import JukeboxCore
import Testing

@Suite("Control socket path")
struct SocketPathTests {
    @Test func resolutionOrder() {
        let env = ["JUKEBOX_SOCKET": "/srv/j.sock", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(SocketPath.resolve(explicit: "/x.sock", environment: env, uid: 1000) == "/x.sock")
        #expect(SocketPath.resolve(explicit: nil, environment: env, uid: 1000) == "/srv/j.sock")
        #expect(SocketPath.resolve(explicit: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000) == "/run/user/1000/jukeboxd.sock")
        #expect(SocketPath.resolve(explicit: nil, environment: [:], uid: 0) == "/run/jukeboxd/jukeboxd.sock")
        #expect(SocketPath.resolve(explicit: nil, environment: [:], uid: 1000) == "/tmp/jukeboxd-1000.sock")
        #expect(SocketPath.resolve(explicit: nil, environment: ["JUKEBOX_SOCKET": ""], uid: 7) == "/tmp/jukeboxd-7.sock")
    }

    @Test func clientKeepsWhatWasConfigured() {
        #expect(SocketPath.resolveForClient(explicit: "/nonexistent/x.sock", environment: [:], uid: 1000) == "/nonexistent/x.sock")
        #expect(SocketPath.resolveForClient(explicit: nil, environment: ["JUKEBOX_SOCKET": "/nonexistent/y.sock"], uid: 1000) == "/nonexistent/y.sock")
    }
}
