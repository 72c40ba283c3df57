import Foundation
import JukeboxTestSupport
import Testing

/// Alerts over a real mosquitto: a switch for each (Home Assistant's "Alert: lockdown"),
/// turned on and off from the broker, its state following a start from the CLI too, and the
/// Playback event entity's `alert-started` and `alert-ended`.
extension MQTTFrontEndTests {
    @Test func eachAlertHasASwitchAndItsStartAndEndAreEvents() async throws {
        let mosquitto = try Mosquitto()
        try session(port: mosquitto.port, top: #" "alerts": { "lockdown": { "clip": "walk", "every": "1h" }, "evacuate": { "clip": "water", "every": "1h" } },"#)
        try await mosquitto.run { _ in
            try await mosquitto.subscribed(["jukeboxd/desk/playback"]) { subscriber in
                _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                    #expect(await log.waitFor("MQTT connected to mqtt://127.0.0.1:\(mosquitto.port)"))
                    let configs = try await mosquitto.messages("homeassistant/+/jukeboxd_desk/+/config", count: 19, verbose: true, wait: 3)
                    #expect(configs.count == 18, "two switches more than the sixteen: \(configs)")
                    let lockdown = configs.first { $0.hasPrefix("homeassistant/switch/jukeboxd_desk/alert_lockdown/config ") } ?? ""
                    #expect(lockdown.contains(#""name":"Alert: lockdown""#) && lockdown.contains(#""command_topic":"jukeboxd/desk/command/alert_lockdown""#), "\(lockdown)")
                    #expect(lockdown.contains(#""state_topic":"jukeboxd/desk/alert_lockdown""#), "\(lockdown)")
                    let playback = configs.first { $0.hasPrefix("homeassistant/event/jukeboxd_desk/playback/config ") } ?? ""
                    #expect(playback.contains(#""alert-started","alert-ended""#), "\(playback)")
                    #expect(try await mosquitto.messages("jukeboxd/desk/alert_lockdown") == ["OFF"])
                    // On from Home Assistant's switch: the alert is on, and says who started it.
                    try await mosquitto.publish("jukeboxd/desk/command/alert_lockdown", "ON")
                    #expect(try await mosquitto.messages("jukeboxd/desk/alert_lockdown", until: "ON").last == "ON")
                    #expect(try await jukebox("alert").stdout.contains("alert:  lockdown, on since "))
                    #expect(await log.waitFor("the lockdown alert was started by mqtt"))
                    // Another from the CLI replaces it: the switches follow.
                    #expect(try await jukebox("alert", "evacuate").status == 0)
                    #expect(try await mosquitto.messages("jukeboxd/desk/alert_evacuate", until: "ON").last == "ON")
                    #expect(try await mosquitto.messages("jukeboxd/desk/alert_lockdown", until: "OFF").last == "OFF")
                    // Off from the broker ends whichever is on.
                    try await mosquitto.publish("jukeboxd/desk/command/alert_evacuate", "OFF")
                    #expect(try await mosquitto.messages("jukeboxd/desk/alert_evacuate", until: "OFF").last == "OFF")
                    try await mosquitto.publish("jukeboxd/desk/command/alert_fire", "ON")
                    #expect(await log.waitFor(#""fire" is not an alert of this session (its alerts: lockdown, evacuate)"#))
                    #expect(await subscriber.waitUntil { _ in Self.events(subscriber).filter { $0["event_type"] as? String == "alert-ended" }.count == 2 })
                }
                let events = Self.events(subscriber).filter { ($0["event_type"] as? String)?.hasPrefix("alert-") == true }
                let told = events.map { "\($0["event_type"] ?? "?") \($0["alert"] ?? "?") \($0["client"] ?? "?")" }
                // The first's end (told once on disk) and the second's start may come either way round.
                #expect(told.first == "alert-started lockdown mqtt" && told.last == "alert-ended evacuate \(NSUserName())", "\(told)")
                #expect(Set(told) == ["alert-started lockdown mqtt", "alert-started evacuate \(NSUserName())", "alert-ended lockdown mqtt", "alert-ended evacuate \(NSUserName())"], "\(told)")
                let ended = try #require(events.last)
                #expect((ended["reason"] as? String)?.hasSuffix("ended by mqtt") == true, "\(ended)")
                #expect(!Self.events(subscriber).contains { $0["event_type"] as? String == "started" && $0["alert"] != nil }, "soundings are not told one by one")
            }
        }
    }
}
