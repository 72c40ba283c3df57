import JukeboxCore
import JukeboxProtocol
import FoundationEssentials

/// Home Assistant's MQTT discovery configs for one jukeboxd: retained on
/// `PREFIX/COMPONENT/NODE/OBJECT/config`, grouped under one device, each with the fields
/// Home Assistant requires for its component, and all following the availability topic.
struct HomeAssistantDiscovery {
    let topics: MQTTTopics
    let sessionName: String
    /// The enabled clips' titles, the options of the "play" select.
    let titles: [String]
    /// The top of the volume slider: the session's `maxVolume`, 0–100.
    var maxVolume = Jukebox.volumeRange.upperBound
    /// The session has a music bed: a switch turns its music off and on.
    var bed = false
    /// The session's day plans: the "Today's plan" select's options; empty without plans.
    var plans: [String] = []
    /// The day plans' calendars: a sensor of each one's health.
    var calendars: [String] = []
    /// The session's alerts: a switch for each ("Alert: lockdown").
    var alerts: [String] = []

    struct Device: Encodable {
        var identifiers: [String]
        var name: String
        var manufacturer = "jukeboxd"
        var model = "jukeboxd"
        var sw_version = JukeboxVersion.current
    }

    /// The fields of every component, those that do not apply left out.
    struct Config: Encodable {
        var name: String
        var unique_id: String
        var availability_topic: String
        var device: Device
        var command_topic: String?
        var state_topic: String?
        var payload_press: String?
        var payload_on: String?
        var payload_off: String?
        var min: Int?
        var max: Int?
        var step: Int?
        var mode: String?
        var unit_of_measurement: String?
        var state_class: String?
        var device_class: String?
        var options: [String]?
        var available_tones: [String]?
        var event_types: [String]?
        var support_duration: Bool?
        var support_volume_set: Bool?
        var latest_version_topic: String?
        var icon: String?
    }

    /// (topic, JSON) for each entity.
    var configs: [(String, String)] {
        let device = Device(identifiers: [topics.nodeID], name: "jukeboxd \(sessionName)")
        func config(_ object: String, _ name: String) -> Config {
            Config(name: name, unique_id: "\(topics.nodeID)_\(object)", availability_topic: topics.availability, device: device)
        }
        var entities: [(String, String, Config)] = []
        // Buttons: (object and command, name, icon).
        for (object, name, icon) in [("skip", "Skip", "mdi:skip-next"), ("pick", "Pick now", "mdi:shuffle-variant")] {
            var button = config(object, name)
            button.command_topic = topics.command(object)
            button.payload_press = "PRESS"
            button.icon = icon
            entities.append(("button", object, button))
        }
        // Switches: (object, command and state, name, icon). Quiet is on while nothing jukeboxd
        // starts by itself plays (quiet hours, or quiet by hand); turning it off lifts quiet
        // hours in force until they end.
        // Music is the music bed's (`bed on|off`), there only when the session has one.
        let switches = [("paused", "Paused", "mdi:pause"), ("quiet", "Quiet", "mdi:volume-off")] + (bed ? [("music", "Music", "mdi:music-note")] : [])
        for (object, name, icon) in switches {
            var toggle = config(object, name)
            toggle.command_topic = topics.command(object)
            toggle.state_topic = topics.state(object)
            toggle.payload_on = "ON"
            toggle.payload_off = "OFF"
            toggle.icon = icon
            entities.append(("switch", object, toggle))
        }
        // An alert's switch: on starts it (an automation, a wall button); off ends it.
        for name in alerts {
            var toggle = config("alert_\(name)", "Alert: \(name)")
            toggle.command_topic = topics.command("alert_\(name)")
            toggle.state_topic = topics.state("alert_\(name)")
            toggle.payload_on = "ON"
            toggle.payload_off = "OFF"
            toggle.icon = "mdi:alarm-light"
            entities.append(("switch", "alert_\(name)", toggle))
        }
        var volume = config("volume", "Volume")
        volume.command_topic = topics.command("volume")
        volume.state_topic = topics.state("volume")
        volume.min = Jukebox.volumeRange.lowerBound
        volume.max = maxVolume
        volume.step = 1
        volume.mode = "slider"
        volume.unit_of_measurement = "%"
        volume.icon = "mdi:volume-high"
        entities.append(("number", "volume", volume))
        if !titles.isEmpty {
            var play = config("play", "Play a clip")
            play.command_topic = topics.command("play_title")
            play.options = titles
            play.icon = "mdi:play"
            entities.append(("select", "play", play))
            // Home Assistant's siren: `siren.turn_on` with a tone (a clip's title), a
            // duration to stop it after, and a level to play it at; on while a clip it
            // started plays.
            var siren = config("siren", "Clip")
            siren.command_topic = topics.command("siren")
            siren.state_topic = topics.state("siren")
            siren.available_tones = titles
            siren.support_duration = true
            siren.support_volume_set = true
            siren.icon = "mdi:bullhorn"
            entities.append(("siren", "siren", siren))
        }
        if !plans.isEmpty {
            // Today's plan: choosing one sets it by hand for today; `automatic` goes back to
            // what the calendars and the rules say. Tomorrow's, to see a snow day set ahead.
            var today = config("plan_today", "Today's plan")
            today.command_topic = topics.command("plan_today")
            today.state_topic = topics.state("plan_today")
            today.options = plans + [MQTTCommands.automatic]
            today.icon = "mdi:calendar-today"
            entities.append(("select", "plan_today", today))
            var tomorrow = config("plan_tomorrow", "Tomorrow's plan")
            tomorrow.state_topic = topics.state("plan_tomorrow")
            tomorrow.icon = "mdi:calendar-arrow-right"
            entities.append(("sensor", "plan_tomorrow", tomorrow))
            for name in calendars {
                var calendar = config("calendar_\(name)", "Calendar \(name)")
                calendar.state_topic = topics.state("calendar_\(name)")
                calendar.icon = "mdi:calendar-sync"
                entities.append(("sensor", "calendar_\(name)", calendar))
            }
        }
        // Home Assistant's notify entity: its message is the payload, said as an announcement.
        var say = config("say", "Say")
        say.command_topic = topics.command("say")
        say.icon = "mdi:account-voice"
        entities.append(("notify", "say", say))
        // Sensors: (object and state topic, name, icon, state class).
        let sensors = [
            ("now_playing", "Now playing", "mdi:music", nil), ("queue_length", "Queue length", "mdi:playlist-play", "measurement"),
            ("device", "Audio device", "mdi:speaker", nil), ("last_played", "Last played", "mdi:history", nil),
        ]
        for (object, name, icon, stateClass) in sensors {
            var sensor = config(object, name)
            sensor.state_topic = topics.state(object)
            sensor.icon = icon
            sensor.state_class = stateClass
            entities.append(("sensor", object, sensor))
        }
        // On while jukeboxd has the session's other players lowered: an automation can duck
        // Home Assistant's own media players with it (docs/home-assistant.md).
        var ducking = config("ducking", "Ducking")
        ducking.state_topic = topics.state("ducking")
        ducking.payload_on = "ON"
        ducking.payload_off = "OFF"
        ducking.icon = "mdi:volume-low"
        entities.append(("binary_sensor", "ducking", ducking))
        // Each play that starts or ends, for automations: "when the bell has rung", "when a
        // bell was missed".
        var playback = config("playback", "Playback")
        playback.state_topic = topics.state("playback")
        playback.event_types = PlaybackEvents.types
        playback.icon = "mdi:bell-ring"
        entities.append(("event", "playback", playback))
        // When something next plays by itself: a fixed time, or the next random pick.
        var nextPlay = config("next_play", "Next play")
        nextPlay.state_topic = topics.state("next_play")
        nextPlay.device_class = "timestamp"
        nextPlay.icon = "mdi:clock-outline"
        entities.append(("sensor", "next_play", nextPlay))
        // The version installed, and the latest one when an automation of the user's publishes
        // it (retained) on TOPIC/latest_version: Home Assistant then offers the update
        // (docs/home-assistant.md). Installing it is apt's, on the machine.
        var update = config("update", "jukeboxd")
        update.state_topic = topics.state("update")
        update.latest_version_topic = topics.state("latest_version")
        update.device_class = "firmware"
        entities.append(("update", "update", update))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return entities.map { component, object, config in
            (topics.discovery(component, object), String(decoding: (try? encoder.encode(config)) ?? Data(), as: UTF8.self))
        }
    }
}
