import Foundation
import JukeboxTestSupport
import Testing

/// An alert over HTTP: started with the password, it cannot be ended by a request without it.
extension WebAPITests {
    @Test func anAlertStartedOverHTTPIsNotEndedWithoutThePassword() async throws {
        let web = try WebDaemon(fields: #""alerts": { "lockdown": { "clip": "walk", "every": "1h" } },"#)
        try await web.run { base, _ in
            let started = try await rpc(base, #"{"jsonrpc":"2.0","id":1,"method":"alert","params":{"start":"lockdown"}}"#)
            #expect(started.status == 200 && started.body.contains(#""name":"lockdown""#), "\(started.body)")
            for credentials in [[], ["-H", "Authorization: Bearer wrong"]] {
                let refused = try await rpc(base, #"{"jsonrpc":"2.0","id":2,"method":"alert","params":{"end":true}}"#, credentials: credentials)
                #expect(refused.status == 401)
            }
            let shown = try await DaemonProcess.run(["--socket", web.socket, "--json", "alert"], tool: "jukebox")
            #expect(shown.stdout.contains(#""name":"lockdown""#), "still on: \(shown.stdout)")
            let ended = try await rpc(base, #"{"jsonrpc":"2.0","id":3,"method":"alert","params":{"end":true}}"#)
            #expect(ended.status == 200 && ended.body.contains(#""alert":null"#), "\(ended.body)")
        }
    }
}
