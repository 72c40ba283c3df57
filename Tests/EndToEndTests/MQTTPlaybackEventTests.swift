import Foundation
import JukeboxTestSupport
import Testing

/// Home Assistant's Playback event entity against a real mosquitto: every event type with
/// its attributes, a fixed time missed while the daemon was stopped and one skipped for quiet,
/// and each play told once, not again after a restart.
extension MQTTFrontEndTests {
    /// `HH:MM` in local time, `minutes` from now (negative: before).
    static func localTime(minutes: Int) -> String {
        let date = Date().addingTimeInterval(Double(minutes * 60))
        let parts = Calendar.current.dateComponents(in: TimeZone.current, from: date)
        return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    }

    /// The Playback events received, as objects.
    static func events(_ subscriber: Mosquitto.Subscriber) -> [[String: Any]] {
        subscriber.payloads("jukeboxd/desk/playback").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test(.enabled(if: Espeak.isInstalled, Comment(rawValue: Espeak.missing)))
    func everyPlayIsAnEventOnceWithItsAttributes() async throws {
        let mosquitto = try Mosquitto()
        try folder.write("gone.wav", tone)
        // Stopped an hour ago: the bell's time ten minutes ago was missed, and the owl's,
        // twenty minutes ago, fell in quiet hours.
        try folder.write("Desk.json", text: """
            { "interval": { "min": "1h", "max": "1h" },
              "quiet": [ { "from": "\(Self.localTime(minutes: -25))", "to": "\(Self.localTime(minutes: -15))" } ],
              "mqtt": { "broker": "mqtt://127.0.0.1:\(mosquitto.port)" },
              "clips": [ { "file": "water.wav", "title": "Drink some water" }, { "file": "walk.wav" }, { "file": "gone.wav" },
                         { "file": "walk.wav", "id": "bell", "at": ["\(Self.localTime(minutes: -10))"] },
                         { "file": "walk.wav", "id": "owl", "at": ["\(Self.localTime(minutes: -20))"] } ] }
            """)
        let anHourAgo = Int(Date().timeIntervalSince1970) - 3600
        try folder.write("state.json", text: #"{"version":1,"nextTicket":1,"waiting":[],"paused":false,"volume":1,"stats":{},"history":[],"timetableUntil":\#(anHourAgo)}"#)
        try await mosquitto.run { _ in
            let topics = ["jukeboxd/desk/availability", "jukeboxd/desk/playback", "homeassistant/event/jukeboxd_desk/playback/config"]
            try await mosquitto.subscribed(topics) { subscriber in
                _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                    // Online once subscribed to its commands (and told of plays only then).
                    #expect(await subscriber.waitUntil { $0.contains("jukeboxd/desk/availability online") })
                    #expect(await log.waitFor("missed bell at "), "a warning naming the clip and its time")
                    try await mosquitto.publish("jukeboxd/desk/command/play", "water")
                    #expect(await log.waitFor("played water"))
                    try FileManager.default.removeItem(atPath: folder.file("gone.wav"))
                    #expect(try await jukebox("play", "gone", "--client", "kitchen").status == 0)
                    #expect(await log.waitFor("failed gone"))
                    try await mosquitto.publish("jukeboxd/desk/command/say", "Dinner is ready")
                    #expect(await log.waitFor("played say"))
                    #expect(await subscriber.waitUntil { _ in Self.events(subscriber).contains { $0["event_type"] as? String == "announced" } })
                }
                // The entity, with its event types.
                let config = try #require(subscriber.payloads("homeassistant/event/jukeboxd_desk/playback/config").first)
                let entity = try #require(try JSONSerialization.jsonObject(with: Data(config.utf8)) as? [String: Any])
                #expect(entity["event_types"] as? [String] == ["started", "finished", "failed", "skipped", "missed", "announced", "held-back", "alert-started", "alert-ended"])
                #expect(entity["state_topic"] as? String == "jukeboxd/desk/playback")
                let events = Self.events(subscriber)
                func event(_ type: String, _ clip: String) -> [String: Any]? {
                    events.first { $0["event_type"] as? String == type && $0["clip"] as? String == clip }
                }
                // Each once; the times passed while stopped are told once connected, beside
                // the plays that start meanwhile, so only each clip's own order is fixed.
                let types = events.map { "\($0["event_type"] ?? "?") \($0["clip"] ?? "?")" }
                #expect(types.sorted() == ["announced say", "failed gone", "finished water", "missed bell", "skipped owl", "started gone", "started say", "started water"], "\(types)")
                for clip in ["water", "gone", "say"] {
                    #expect(types.filter { $0.hasSuffix(" \(clip)") }.first == "started \(clip)", "\(types)")
                }
                #expect(events.compactMap { $0["play"] as? Int } == [1, 2, 3, 4, 5], "the plays that ended, told in the order they ended")
                let skipped = try #require(event("skipped", "owl"))
                #expect(skipped["source"] as? String == "fixed-time" && skipped["reason"] as? String == "quiet at its time; it is not saved up for afterwards")
                #expect((skipped["time"] as? String)?.hasSuffix("+00:00") == true)
                let missed = try #require(event("missed", "bell"))
                #expect((missed["reason"] as? String)?.contains("jukeboxd was not running") == true, "\(missed)")
                #expect(missed["ticket"] as? Int != nil && missed["play"] as? Int != nil)
                let finished = try #require(event("finished", "water"))
                #expect(finished["title"] as? String == "Drink some water" && finished["source"] as? String == "mqtt" && finished["client"] as? String == "mqtt")
                #expect(finished["reason"] == nil)
                let failed = try #require(event("failed", "gone"))
                #expect(failed["source"] as? String == "cli" && failed["client"] as? String == "kitchen")
                #expect((failed["reason"] as? String)?.contains("gone.wav") == true, "\(failed)")
                #expect(event("announced", "say")?["source"] as? String == "say")
                #expect(event("started", "water")?["ticket"] as? Int == finished["ticket"] as? Int)
            }
            // Started again: nothing is told twice; a new play is told.
            try await mosquitto.subscribed(["jukeboxd/desk/availability", "jukeboxd/desk/playback"]) { subscriber in
                _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                    // The broker kept "offline" from the first run; "online" is this one's.
                    #expect(await subscriber.waitUntil { $0.contains("jukeboxd/desk/availability online") })
                    let played = try await jukebox("play", "walk")
                    #expect(played.status == 0)
                    #expect(await subscriber.waitUntil { _ in Self.events(subscriber).contains { $0["event_type"] as? String == "finished" } })
                }
                let types = Self.events(subscriber).map { "\($0["event_type"] ?? "?") \($0["clip"] ?? "?")" }
                #expect(types == ["started walk", "finished walk"], "\(types)")
            }
        }
    }
}
