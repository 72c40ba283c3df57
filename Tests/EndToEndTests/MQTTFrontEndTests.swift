import Foundation
import JukeboxCore
import JukeboxProtocol
import JukeboxTestSupport
import Subprocess
import Testing

/// jukeboxd with a session `mqtt` section against a real mosquitto started by the test:
/// Home Assistant discovery, state topics, commands, the last will, a broker restart, and a
/// broker that is not there.
@Suite("MQTT and Home Assistant", .timeLimit(.minutes(2)), .enabled(if: Mosquitto.isInstalled, Comment(rawValue: Mosquitto.missing)))
struct MQTTFrontEndTests: DaemonSuite {
    let folder: TemporaryDirectory
    let tone = WAVFile.bytes(WAVFile.tone(frequency: 440, frames: 4000, rate: 8000, channels: 1), encoding: .s16, rate: 8000, channels: 1)
    var socket: String { folder.file("c.sock") }
    var arguments: [String] { [folder.file("Desk.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("water.wav", tone)
        try folder.write("walk.wav", tone)
    }

    func session(port: Int, extra: String = "", top: String = "") throws {
        try folder.write("Desk.json", text: """
            { "interval": { "min": "1h", "max": "1h" },\(top)
              "mqtt": { "broker": "mqtt://127.0.0.1:\(port)"\(extra) },
              "clips": [ { "file": "water.wav", "title": "Drink some water" }, { "file": "walk.wav" } ] }
            """)
    }

    /// The fields Home Assistant requires of each component, and the ones every entity shares.
    static let required: [String: [String]] = [
        "button": ["command_topic"], "switch": ["command_topic", "state_topic"], "number": ["command_topic", "state_topic", "min", "max"],
        "select": ["command_topic", "options"], "sensor": ["state_topic"], "notify": ["command_topic"],
        "binary_sensor": ["state_topic"], "siren": ["command_topic"], "event": ["state_topic", "event_types"], "update": ["state_topic"],
    ]

    /// With a music bed: a seventeenth config, the Music switch, whose command turns the bed's
    /// music off and on and whose state follows it, from any front end.
    @Test func aSessionWithABedHasAMusicSwitch() async throws {
        let mosquitto = try Mosquitto()
        try session(port: mosquitto.port, top: #" "bed": { "pipe": "bed.fifo" },"#)
        try await mosquitto.run { _ in
            _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                #expect(await log.waitFor("MQTT connected to mqtt://127.0.0.1:\(mosquitto.port)"))
                let configs = try await mosquitto.messages("homeassistant/+/jukeboxd_desk/+/config", count: 18, verbose: true, wait: 3)
                #expect(configs.count == 17, "\(configs)")
                #expect(configs.contains { $0.hasPrefix("homeassistant/switch/jukeboxd_desk/music/config ") && $0.contains(#""command_topic":"jukeboxd/desk/command/music""#) }, "the Music switch")
                #expect(try await mosquitto.messages("jukeboxd/desk/music") == ["ON"])
                try await mosquitto.publish("jukeboxd/desk/command/music", "OFF")
                #expect(try await mosquitto.messages("jukeboxd/desk/music", until: "OFF").last == "OFF")
                #expect(try await jukebox("bed").stdout.hasPrefix("off, "))
                #expect(try await jukebox("bed", "on").status == 0)
                #expect(try await mosquitto.messages("jukeboxd/desk/music", until: "ON").last == "ON")
                try await mosquitto.publish("jukeboxd/desk/command/music", "LOUD")
                #expect(await log.waitFor(#""LOUD" is not ON or OFF"#))
            }
        }
    }

    /// With day plans: a "Today's plan" select that sets today's plan by hand (and `automatic`
    /// clears it), a sensor of tomorrow's, one of each calendar's health, and a `plan` command
    /// for any date; each refusal names the plans.
    @Test func dayPlansHaveASelectForTodayAndSensorsForTomorrowAndTheCalendars() async throws {
        let mosquitto = try Mosquitto()
        try folder.write("term.ics", text: "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n")
        try session(port: mosquitto.port, top: #" "plans": { "regular": [ { "at": "23:59", "clip": "walk" } ], "none": [] }, "days": [ { "plan": "regular" } ], "calendars": [ { "name": "term", "source": "term.ics", "plans": { "No school": "none" } } ],"#)
        try await mosquitto.run { _ in
            _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                #expect(await log.waitFor("MQTT connected to mqtt://127.0.0.1:\(mosquitto.port)"))
                let configs = try await mosquitto.messages("homeassistant/+/jukeboxd_desk/+/config", count: 20, verbose: true, wait: 3)
                #expect(configs.count == 19, "\(configs)")
                let select = configs.first { $0.hasPrefix("homeassistant/select/jukeboxd_desk/plan_today/config ") } ?? ""
                #expect(select.contains(#""options":["regular","none","automatic"]"#) && select.contains(#""command_topic":"jukeboxd/desk/command/plan_today""#), "\(select)")
                #expect(configs.contains { $0.hasPrefix("homeassistant/sensor/jukeboxd_desk/plan_tomorrow/config ") })
                #expect(configs.contains { $0.hasPrefix("homeassistant/sensor/jukeboxd_desk/calendar_term/config ") })
                #expect(try await mosquitto.messages("jukeboxd/desk/plan_today") == ["regular"])
                #expect(try await mosquitto.messages("jukeboxd/desk/plan_tomorrow") == ["regular"])
                #expect(try await mosquitto.messages("jukeboxd/desk/calendar_term", until: "ok").last == "ok")
                try await mosquitto.publish("jukeboxd/desk/command/plan_today", "none")
                #expect(try await mosquitto.messages("jukeboxd/desk/plan_today", until: "none").last == "none")
                #expect(try await jukebox("plan", "--days", "1").stdout.contains("none  (set by hand (mqtt, "))
                try await mosquitto.publish("jukeboxd/desk/command/plan_today", "automatic")
                #expect(try await mosquitto.messages("jukeboxd/desk/plan_today", until: "regular").last == "regular")
                try await mosquitto.publish("jukeboxd/desk/command/plan", #"{"date": "tomorrow", "plan": "none"}"#)
                #expect(try await mosquitto.messages("jukeboxd/desk/plan_tomorrow", until: "none").last == "none")
                try await mosquitto.publish("jukeboxd/desk/command/plan_today", "holiday")
                #expect(await log.waitFor(#""holiday" is not one of the session's plans (regular, none)"#))
                // A calendar that breaks is told on its sensor.
                try folder.write("term.ics", text: "not a calendar")
                #expect(try await jukebox("reload").status == 0)
                #expect(try await mosquitto.messages("jukeboxd/desk/calendar_term", until: { $0.hasPrefix("failing: ") }).last?.contains("is not an iCalendar file") == true)
            }
        }
    }

    @Test func homeAssistantFindsTheDeviceAndItsCommandsWork() async throws {
        let mosquitto = try Mosquitto()
        try session(port: mosquitto.port, top: #" "maxVolume": 0.8,"#)
        try await mosquitto.run { _ in
            _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                #expect(await log.waitFor("MQTT connected to mqtt://127.0.0.1:\(mosquitto.port)"))
                // Discovery: sixteen retained configs under one device, each valid for Home Assistant.
                let configs = try await mosquitto.messages("homeassistant/+/jukeboxd_desk/+/config", count: 17, verbose: true, wait: 3)
                #expect(configs.count == 16, "\(configs)")
                #expect(configs.contains { $0.hasPrefix("homeassistant/binary_sensor/jukeboxd_desk/ducking/config ") && $0.contains(#""state_topic":"jukeboxd/desk/ducking""#) }, "the Ducking sensor")
                #expect(configs.contains { $0.hasPrefix("homeassistant/sensor/jukeboxd_desk/next_play/config ") && $0.contains(#""device_class":"timestamp""#) })
                #expect(configs.contains { $0.hasPrefix("homeassistant/switch/jukeboxd_desk/quiet/config ") }, "the quiet switch")
                #expect(configs.contains { $0.hasPrefix("homeassistant/notify/jukeboxd_desk/say/config ") }, "the notify entity says text")
                var uniqueIDs = Set<String>()
                for line in configs {
                    let (topic, payload) = try #require(line.split(separator: " ", maxSplits: 1).map(String.init).twoElements)
                    let component = topic.split(separator: "/")[1]
                    let config = try #require(try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any], "\(payload)")
                    for field in (Self.required[String(component)] ?? ["?"]) + ["name", "unique_id", "availability_topic", "device"] {
                        #expect(config[field] != nil, "\(topic) has no \(field)")
                    }
                    uniqueIDs.insert(config["unique_id"] as? String ?? "")
                    #expect(config["availability_topic"] as? String == "jukeboxd/desk/availability")
                    #expect((config["device"] as? [String: Any])?["identifiers"] as? [String] == ["jukeboxd_desk"])
                    #expect((config["device"] as? [String: Any])?["sw_version"] as? String == JukeboxVersion.current)
                    if topic.hasSuffix("/volume/config") {
                        #expect(config["max"] as? Int == 80, "the slider ends at maxVolume")
                    }
                    if component == "select" {
                        #expect(config["options"] as? [String] == ["Drink some water", "walk"])
                    }
                    if component == "siren" {
                        #expect(config["available_tones"] as? [String] == ["Drink some water", "walk"])
                        #expect(config["support_duration"] as? Bool == true && config["support_volume_set"] as? Bool == true)
                        #expect(config["state_topic"] as? String == "jukeboxd/desk/siren")
                    }
                }
                #expect(uniqueIDs.count == 16)
                // The update entity: the version installed; the latest, when an automation publishes it.
                #expect(configs.contains { $0.hasPrefix("homeassistant/update/jukeboxd_desk/update/config ") && $0.contains(#""latest_version_topic":"jukeboxd/desk/latest_version""#) })
                #expect(try await mosquitto.messages("jukeboxd/desk/update") == [#"{"installed_version":"\#(JukeboxVersion.current)"}"#])
                // State, retained.
                #expect(try await mosquitto.messages("jukeboxd/desk/availability") == ["online"])
                #expect(try await mosquitto.messages("jukeboxd/desk/paused") == ["OFF"])
                #expect(try await mosquitto.messages("jukeboxd/desk/volume") == ["80"], "held to maxVolume")
                #expect(try await mosquitto.messages("jukeboxd/desk/now_playing") == ["nothing"], "retained: an empty message would delete it")
                // The next random pick, an hour away, as Home Assistant's timestamp.
                let nextPlay = try await mosquitto.messages("jukeboxd/desk/next_play")
                #expect(nextPlay.count == 1 && nextPlay[0].count == 25 && nextPlay[0].hasSuffix("+00:00") && nextPlay[0].dropFirst(10).hasPrefix("T"), "\(nextPlay)")
                // Commands change the state, and the state topics follow.
                try await mosquitto.publish("jukeboxd/desk/command/paused", "ON")
                #expect(try await mosquitto.messages("jukeboxd/desk/paused", until: "ON").last == "ON")
                #expect(try await mosquitto.messages("jukeboxd/desk/next_play", until: "None").last == "None", "paused: nothing plays by itself")
                try await mosquitto.publish("jukeboxd/desk/command/volume", "40")
                #expect(try await mosquitto.messages("jukeboxd/desk/volume", until: "40").last == "40")
                try await mosquitto.publish("jukeboxd/desk/command/play_title", "Drink some water")
                try await mosquitto.publish("jukeboxd/desk/command/play", #"{"clips": ["walk"], "cue": false}"#)
                #expect(try await mosquitto.messages("jukeboxd/desk/queue_length", until: "2").last == "2")
                // What Home Assistant's notify sends: the text itself.
                try await mosquitto.publish("jukeboxd/desk/command/say", "Dinner is ready")
                #expect(try await mosquitto.messages("jukeboxd/desk/queue_length", until: "3").last == "3")
                // The quiet switch: a request that asks to wait for the end of quiet is held,
                // and queued once the switch is turned off.
                #expect(try await mosquitto.messages("jukeboxd/desk/quiet") == ["OFF"])
                try await mosquitto.publish("jukeboxd/desk/command/quiet", "ON")
                #expect(try await mosquitto.messages("jukeboxd/desk/quiet", until: "ON").last == "ON")
                try await mosquitto.publish("jukeboxd/desk/command/play", #"{"clips": ["walk"], "afterQuiet": true}"#)
                #expect(await log.waitFor("held walk for mqtt until quiet ends"))
                let held = try await jukebox("queue")
                #expect(held.stdout.contains("held until quiet ends:\n  4 walk (over MQTT)"), "\(held.stdout)")
                #expect(try await jukebox("quiet").stdout == "quiet by hand until turned off; 1 held until quiet ends\n")
                try await mosquitto.publish("jukeboxd/desk/command/quiet", "OFF")
                #expect(try await mosquitto.messages("jukeboxd/desk/quiet", until: "OFF").last == "OFF")
                #expect(try await mosquitto.messages("jukeboxd/desk/queue_length", until: "4").last == "4")
                let queue = try await jukebox("queue")
                #expect(queue.stdout.contains("water") && queue.stdout.contains("walk") && queue.stdout.contains("(over MQTT)"), "\(queue.stdout)")
                #expect(queue.stdout.contains("say: Dinner is ready"), "\(queue.stdout)")
                // "now" cuts in, from the play and say commands alike: both go first, in order.
                try await mosquitto.publish("jukeboxd/desk/command/play", #"{"clips": ["walk"], "now": true}"#)
                try await mosquitto.publish("jukeboxd/desk/command/say", #"{"text": "Fire drill", "now": true}"#)
                #expect(try await mosquitto.messages("jukeboxd/desk/queue_length", until: "6").last == "6")
                let urgent = try await jukebox("queue")
                #expect(urgent.stdout.contains("  1. 5 walk (over MQTT) now\n  2. 6 say: Fire drill (over MQTT) now\n"), "\(urgent.stdout)")
                // A bad payload is refused with the reason, and nothing else happens.
                try await mosquitto.publish("jukeboxd/desk/command/volume", "loud")
                try await mosquitto.publish("jukeboxd/desk/command/play", "nosuchclip")
                try await mosquitto.publish("jukeboxd/desk/command/dance", "now")
                try await mosquitto.publish("jukeboxd/desk/command/say", String(repeating: "blah ", count: 300))
                #expect(await log.waitFor("MQTT command say refused: the text to say is longer than 1000 characters"))
                #expect(await log.waitFor("MQTT command volume refused: \"loud\" is not a volume from 0 to 100"))
                #expect(await log.waitFor("MQTT command play refused:"))
                #expect(await log.waitFor("MQTT command dance refused: there is no such command"))
                #expect(try await jukebox("volume").stdout.contains("40"))
                // A change made with the CLI shows on the state topic too (the volume event).
                #expect(try await jukebox("volume", "55").status == 0)
                #expect(try await mosquitto.messages("jukeboxd/desk/volume", until: "55").last == "55")
            }
        }
    }

    /// A burst over MQTT waits at the broker rather than being dropped: 150 siren ONs and an
    /// OFF back to back (`mosquitto_pub -l`, one message a line), then a volume; once the
    /// volume is heard, the OFF was too, and no siren entry is left.
    @Test func anOffAfterABurstIsObeyed() async throws {
        let mosquitto = try Mosquitto()
        try session(port: mosquitto.port)
        try await mosquitto.run { _ in
            _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                #expect(await log.waitFor("MQTT connected to mqtt://127.0.0.1:\(mosquitto.port)"))
                #expect(try await jukebox("pause").status == 0)
                let burst = Array(repeating: #"{"state": "ON", "tone": "walk"}"#, count: 150) + [#"{"state": "OFF"}"#]
                let sent = try await Subprocess.run(
                    .path("/usr/bin/mosquitto_pub"), arguments: ["-h", "127.0.0.1", "-p", "\(mosquitto.port)", "-t", "jukeboxd/desk/command/siren", "-q", "1", "-l"],
                    platformOptions: TestProcesses.options, input: .string(burst.joined(separator: "\n") + "\n"), output: .discarded, error: .string(limit: 4096))
                #expect(sent.terminationStatus.isSuccess, "\(sent.standardError)")
                try await mosquitto.publish("jukeboxd/desk/command/volume", "37")
                #expect(try await mosquitto.messages("jukeboxd/desk/volume", until: "37").last == "37")
                let queue = try await jukebox("queue")
                #expect(!queue.stdout.contains("siren"), "every siren entry went with the OFF: \(queue.stdout.prefix(300))")
                #expect(!(await log.lines.contains { $0.contains("dropped") }), "nothing was dropped")
            }
        }
    }

    /// Home Assistant's siren: `siren.turn_on` as Home Assistant publishes it queues the clip
    /// with that title at its level and length, under the client `siren`; `turn_off` ends
    /// only what the siren queued; its tones follow the session at once; and payloads that are
    /// not a siren's are refused with the reason, at, under and over each limit.
    @Test func theSirenQueuesAClipByItsTitleAndItsTonesFollowTheSession() async throws {
        let mosquitto = try Mosquitto()
        try session(port: mosquitto.port, top: #" "maxVolume": 0.8,"#)
        let command = "jukeboxd/desk/command/siren"
        try await mosquitto.run { _ in
            _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                #expect(await log.waitFor("MQTT connected to mqtt://127.0.0.1:\(mosquitto.port)"))
                #expect(try await mosquitto.messages("jukeboxd/desk/siren") == ["OFF"])
                #expect(try await jukebox("pause").status == 0)
                #expect(try await jukebox("play", "walk").status == 0)
                // Exactly as Home Assistant sends it: json.dumps of the state and the service's data.
                try await mosquitto.publish(command, #"{"state": "ON", "tone": "Drink some water", "duration": 10, "volume_level": 0.5}"#)
                try await mosquitto.publish(command, #"{"state": "ON", "tone": "walk", "volume_level": 1.0, "duration": 0.1}"#)
                // A dashboard's toggle sends no tone: the first clip's.
                try await mosquitto.publish(command, #"{"state": "ON"}"#)
                #expect(try await mosquitto.messages("jukeboxd/desk/queue_length", until: "4").last == "4")
                let queue = try await jukebox("queue")
                #expect(queue.stdout.contains("2 water (by Home Assistant's siren) at volume 50 for 10s"), "\(queue.stdout)")
                #expect(queue.stdout.contains("3 walk (by Home Assistant's siren) at volume 80 for 0.1s"), "held to maxVolume: \(queue.stdout)")
                #expect(queue.stdout.contains("4 water (by Home Assistant's siren)\n"), "\(queue.stdout)")
                // Turned off: what the siren queued goes; the rest stays.
                try await mosquitto.publish(command, #"{"state": "OFF"}"#)
                #expect(try await mosquitto.messages("jukeboxd/desk/queue_length", until: "1").last == "1")
                #expect(try await jukebox("queue").stdout.contains("1 walk (by \(UserName.name(of: getuid())))"))
                // Refused, each with its reason; nothing is queued.
                let refused: [(String, String)] = [
                    (#"{"state": "ON", "tone": "Drink some wat"}"#, #"no clip "Drink some wat" in the session"#),
                    (#"{"state": "ON", "tone": 3}"#, #""tone" must be a clip's title, not 3"#),
                    (#"{"state": "ON", "tone": "walk", "duration": 0}"#, #""duration" must be a number of seconds from 0.1 to 86400, not 0"#),
                    (#"{"state": "ON", "tone": "walk", "duration": 0.09}"#, #"not 0.09"#),
                    (#"{"state": "ON", "tone": "walk", "duration": 86401}"#, #"not 86401"#),
                    (#"{"state": "ON", "tone": "walk", "duration": 315360000}"#, #"not 315360000"#),
                    (#"{"state": "ON", "tone": "walk", "duration": "10"}"#, #"not "10""#),
                    (#"{"state": "ON", "tone": "walk", "volume_level": 1e20}"#, #""volume_level" must be a number from 0 to 1, not 1e+20"#),
                    (#"{"state": "ON", "tone": "walk", "volume_level": -0.01}"#, #"not -0.01"#),
                    (#"{"state": "ON", "tone": "walk", "volume_level": 1.01}"#, #"not 1.01"#),
                    (#"{"state": "ON", "tone": "walk", "colour": "red"}"#, #""colour" is not a siren field"#),
                    (#"{"state": "LOUD"}"#, #""state" must be "ON" or "OFF""#),
                    (#"{"tone": "walk"}"#, #""state" must be "ON" or "OFF""#),
                    ("ring", "the payload is not"),
                ]
                for (payload, _) in refused { try await mosquitto.publish(command, payload) }
                for (payload, reason) in refused {
                    #expect(await log.waitUntil { $0.contains { $0.contains("MQTT command siren refused: ") && $0.contains(reason) } }, "\(payload)")
                }
                // At the limits: accepted.
                try await mosquitto.publish(command, #"{"state": "ON", "tone": "walk", "duration": 86400, "volume_level": 0}"#)
                #expect(try await mosquitto.messages("jukeboxd/desk/queue_length", until: "2").last == "2")
                #expect(try await jukebox("queue").stdout.contains("walk (by Home Assistant's siren) at volume 0 for 24h"))
                // A clip renamed: the siren's tones, and the select's options, follow at once.
                #expect(try await jukebox("edit", "walk", "--title", "Fire bell").status == 0)
                var tones: [String] = []
                for _ in 0..<50 where !tones.contains("Fire bell") {
                    let config = try await mosquitto.messages("homeassistant/siren/jukeboxd_desk/siren/config").first ?? ""
                    let object = try JSONSerialization.jsonObject(with: Data(config.utf8)) as? [String: Any]
                    tones = object?["available_tones"] as? [String] ?? []
                    if !tones.contains("Fire bell") { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(tones == ["Drink some water", "Fire bell"])
            }
        }
    }

    /// Numbers past what an integer holds used to trap in the conversion (SIGILL), and a
    /// retained one took the daemon down again at every start. Retained commands are not
    /// carried out at all; a line break in a payload cannot forge a log entry.
    @Test func hugeNumbersRetainedCommandsAndLineBreaksCannotHurtTheDaemon() async throws {
        let mosquitto = try Mosquitto()
        try session(port: mosquitto.port)
        try await mosquitto.run { _ in
            // Left on the broker before the daemon starts: handed out at its every connection.
            try await mosquitto.publish("jukeboxd/desk/command/volume", "1e20", retain: true)
            try await mosquitto.publish("jukeboxd/desk/command/paused", "ON", retain: true)
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                #expect(await log.waitFor("MQTT command volume ignored: it was published with the retain flag"))
                #expect(await log.waitFor("MQTT command paused ignored: it was published with the retain flag"))
                #expect(try await mosquitto.messages("jukeboxd/desk/paused") == ["OFF"], "the retained ON was not carried out")
                // Live, the same numbers are refused with the reason.
                for number in ["1e20", "-1e30", "9223372036854775808", "-9223372036854775809", "1e400", "nan", "0x40", "100.5", "--5"] {
                    try await mosquitto.publish("jukeboxd/desk/command/volume", number)
                    #expect(await log.waitFor("MQTT command volume refused: \"\(number)\" is not a volume from 0 to 100"), "\(number)")
                }
                try await mosquitto.publish("jukeboxd/desk/command/volume", "39.6")
                #expect(try await mosquitto.messages("jukeboxd/desk/volume", until: "40").last == "40")
                // A payload with a line break stays on its own line.
                try await mosquitto.publish("jukeboxd/desk/command/play", "nosuch\n2026-01-01T00:00:00.000Z notice forged\r\u{1B}[2J")
                #expect(await log.waitFor(#"nosuch\n2026-01-01T00:00:00.000Z notice forged\r\u{1B}[2J"#))
                let lines = await log.lines
                #expect(!lines.contains { $0.hasPrefix("2026-01-01") || $0.contains("\u{1B}") }, "\(lines.suffix(5))")
                #expect(lines.filter { $0.contains("ignored: it was published with the retain flag") }.count == 2, "once each")
                // Refusals are logged 20 a minute at most: 10 so far, 15 more, then a command
                // that is carried out, so all before it have been handled.
                for _ in 0..<15 { try await mosquitto.publish("jukeboxd/desk/command/volume", "loud") }
                try await mosquitto.publish("jukeboxd/desk/command/volume", "41")
                #expect(try await mosquitto.messages("jukeboxd/desk/volume", until: "41").last == "41")
                #expect(await log.lines.filter { $0.contains("MQTT command") && $0.contains("refused") }.count == 20)
                try await mosquitto.publish("jukeboxd/desk/command/volume", "40")
                #expect(try await mosquitto.messages("jukeboxd/desk/volume", until: "40").last == "40")
                return try await jukebox("volume").stdout
            }
            #expect(run.status == 0)
            #expect(run.result.contains("40"), "\(run.result)")
        }
    }

    @Test func theLastWillSaysOfflineWhenTheDaemonIsKilled() async throws {
        let mosquitto = try Mosquitto()
        try session(port: mosquitto.port, extra: #", "topic": "home/jukebox", "discovery": false"#)
        try await mosquitto.run { _ in
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", stopWith: .kill) { log in
                #expect(await log.waitFor("MQTT connected"))
                let availability = try await mosquitto.messages("home/jukebox/availability")
                #expect(availability == ["online"])
            }
            #expect(run.status == nil, "killed")
            #expect(try await mosquitto.messages("home/jukebox/availability", until: "offline").last == "offline")
            // Discovery off: no configs.
            #expect(try await mosquitto.messages("homeassistant/#", count: 1, wait: 1).isEmpty)
        }
    }

    @Test func aBrokerRestartLeadsToReconnectionAndStateAgainAndAStopSaysOffline() async throws {
        let mosquitto = try Mosquitto()
        try session(port: mosquitto.port)
        try await mosquitto.run { broker in
            let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
                #expect(await log.waitFor("MQTT connected"))
                await broker.stop()
                #expect(await log.waitFor("closed the connection"))
                try await broker.start()
                #expect(await log.waitUntil { $0.filter { $0.contains("MQTT connected") }.count == 2 })
                // The broker kept nothing (no persistence): all of it was published again.
                #expect(try await mosquitto.messages("jukeboxd/desk/availability") == ["online"])
                #expect(try await mosquitto.messages("homeassistant/button/jukeboxd_desk/skip/config").count == 1)
            }
            #expect(run.status == 0)
            #expect(try await mosquitto.messages("jukeboxd/desk/availability") == ["offline"], "said on a clean stop")
        }
    }

    /// A fake broker that accepts and then sends what no broker may: the daemon logs the
    /// reason, connects again, and plays on throughout.
    @Test func aBrokerSendingGarbageNeverStopsThePlaying() async throws {
        let garbage: [([UInt8], String)] = [
            ([0x30, 0xFF, 0xFF, 0xFF, 0x7F], "it sent a packet of 268435455 bytes, over the 262144 accepted"),
            ([0x32, 3, 0, 9, 97], "it sent a PUBLISH topic longer than its packet"),
            ([0x60, 0], "it sent a packet of type 6, which a broker does not send this client"),
        ]
        // CONNACK (accepted), then the garbage.
        let broker = ScriptedBroker(answers: garbage.map { [0x20, 2, 0, 0] + $0.0 })
        try session(port: broker.port)
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { [socket] log in
            var served = broker.served.makeAsyncIterator()
            for (_, reason) in garbage {
                #expect(await served.next() == 0x10, "a CONNECT came first, within 60 s")
                if await !log.waitFor("jukeboxd closed its connection to mqtt://127.0.0.1:\(broker.port): \(reason)") {
                    Issue.record("no \"closed its connection: \(reason)\"; the daemon's log: \(await log.lines.suffix(20))")
                }
                // Playing goes on meanwhile.
                let played = try await DaemonProcess.run(["--socket", socket, "play", "water"], tool: "jukebox")
                #expect(played.status == 0, "\(played.stderr)")
            }
            #expect(await log.waitUntil { $0.filter { $0.contains("played water") }.count == garbage.count })
        }
    }

    @Test func withoutABrokerTheDaemonPlaysOnAndSaysSoOnce() async throws {
        let (held, port) = Loopback.bound()
        defer { close(held) }
        try session(port: port)
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            #expect(await log.waitFor("cannot connect (connection refused); trying again"))
            let played = try await jukebox("play", "water")
            #expect(played.status == 0)
            #expect(await log.waitFor("played water"))
            #expect(await log.lines.filter { $0.contains("cannot connect") }.count == 1)
        }
    }
}

extension Array {
    var twoElements: (Element, Element)? { count == 2 ? (self[0], self[1]) : nil }
}
