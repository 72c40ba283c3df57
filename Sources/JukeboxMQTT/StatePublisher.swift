import FoundationEssentials
import JukeboxCore
import MQTT

/// jukeboxd's state on retained topics: all of it on every connection (a broker may have
/// restarted and forgotten it), then what changes as events come. Home Assistant's discovery
/// configs go out on every connection and whenever Home Assistant says it is back online.
actor StatePublisher {
    let topics: MQTTTopics
    let core: Jukebox
    private var client: MQTTClient?
    /// What each state topic last carried on this connection.
    private var published: [String: String] = [:]
    /// The clip titles last advertised to Home Assistant's select, and the volume slider's top.
    private var advertised: Advertised?

    struct Advertised: Equatable {
        var titles: [String]
        var maxVolume: Int
        var bed: Bool
    }

    init(topics: MQTTTopics, core: Jukebox) {
        self.topics = topics
        self.core = core
    }

    func attach(_ client: MQTTClient) { self.client = client }

    func connected() async {
        published = [:]
        await send(topics.availability, "online")
        await publishDiscovery()
        await publishChanges()
    }

    func goingOffline() async {
        await send(topics.availability, "offline")
    }

    /// Publishes the state topics whose value changed.
    func publishChanges() async {
        guard let client, await client.isConnected else { return }
        let snapshot = await core.snapshot()
        let nextPlay = await core.plan().nextPlay
        for (name, value) in Self.state(snapshot, nextPlay: nextPlay) where published[name] != value {
            if await send(topics.state(name), value) { published[name] = value }
        }
        if advertised != Self.advertised(snapshot), published.isEmpty == false { await publishDiscovery(snapshot) }
    }

    /// The state topics and their values.
    static func state(_ snapshot: JukeboxSnapshot, nextPlay: Double?) -> [(String, String)] {
        let device: String = switch snapshot.deviceState {
        case .closed: "idle"
        case .open: "playing through \(snapshot.player.deviceName)"
        case .retrying(let after, let error): "\(error.code); retrying in \(DurationText.format(after))"
        }
        // "nothing", not an empty payload: a retained empty message deletes the retained
        // value, and Home Assistant would show "unknown" after its next restart.
        return [
            ("now_playing", snapshot.queue.current?.clip.title ?? Self.nothing),
            // Home Assistant's siren is on while a clip it queued plays.
            ("siren", snapshot.queue.current?.origin == .client(MQTTCommands.sirenClient) ? "ON" : "OFF"),
            ("queue_length", "\(snapshot.queue.waiting.count)"),
            ("paused", snapshot.queue.paused ? "ON" : "OFF"),
            ("quiet", snapshot.quiet.quiet ? "ON" : "OFF"),
            // The session's other players lowered or paused while clips sound.
            ("ducking", snapshot.ducking ? "ON" : "OFF"),
            ("volume", "\(snapshot.volume)"),
            ("device", device),
            ("last_played", snapshot.queue.history.last.map { "\($0.entry.clip.title)" } ?? Self.nothing),
            // A timestamp sensor: ISO 8601, or "None", which Home Assistant shows as unknown.
            ("next_play", nextPlay.map(Self.timestamp) ?? "None"),
        ] + (snapshot.player.bed.map { [("music", $0.on ? "ON" : "OFF")] } ?? [])
    }

    /// `2026-11-24T21:04:00+00:00`: a moment as Home Assistant's timestamp sensors take it.
    static func timestamp(_ epochSeconds: Double) -> String {
        let reading = FixedOffsetZone(seconds: 0).localTime(at: Int64(epochSeconds.rounded(.down)))
        let second = reading.secondOfDay
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(reading.date)T\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60))+00:00"
    }

    /// What `now_playing` and `last_played` say when there is no clip.
    static let nothing = "nothing"

    static func advertised(_ snapshot: JukeboxSnapshot) -> Advertised {
        Advertised(
            titles: snapshot.catalog.session.clips.filter(\.enabled).map(\.title),
            maxVolume: Int((snapshot.session.maxVolume * Double(Jukebox.volumeRange.upperBound)).rounded(.down)),
            bed: snapshot.player.bed != nil)
    }

    func publishDiscovery() async {
        await publishDiscovery(await core.snapshot())
    }

    private func publishDiscovery(_ snapshot: JukeboxSnapshot) async {
        guard topics.discovery, let client, await client.isConnected else { return }
        let advertised = Self.advertised(snapshot)
        self.advertised = advertised
        let discovery = HomeAssistantDiscovery(topics: topics, sessionName: snapshot.session.name, titles: advertised.titles, maxVolume: advertised.maxVolume, bed: advertised.bed)
        for (topic, config) in discovery.configs {
            await send(topic, config)
        }
    }

    @discardableResult
    private func send(_ topic: String, _ text: String) async -> Bool {
        guard let client else { return false }
        return await client.publish(.init(topic: topic, text: text, qos: .atLeastOnce, retain: true))
    }
}
