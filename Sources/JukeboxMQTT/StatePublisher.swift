import FoundationEssentials
import JukeboxCore
import JukeboxProtocol
import MQTT

/// jukeboxd's state on retained topics: all of it on every connection (a broker may have
/// restarted and forgotten it), then what changes as events come. Home Assistant's discovery
/// configs go out on every connection and whenever Home Assistant says it is back online.
actor StatePublisher {
    let topics: MQTTTopics
    let core: Jukebox
    /// The last play told of: MQTT's own count.
    let told: PlaysTold
    private var client: MQTTClient?
    /// What each state topic last carried on this connection.
    private var published: [String: String] = [:]
    /// The clip titles last advertised to Home Assistant's select, and the volume slider's top.
    private var advertised: Advertised?
    /// Asks `tellPlaysAsAsked` to tell the plays that ended (a play ended, or a connection
    /// began); asks that come while it tells are one more round.
    private nonisolated let tellRequests: AsyncStream<Void>.Continuation
    private nonisolated let tellRequested: AsyncStream<Void>
    /// The last play that may be told: one whose end the events have told of (so its start
    /// was published before it), or one that ended before the front end started.
    private var tellableThrough: UInt64 = 0
    /// A round of telling is under way; `roundEnded` are told when it ends.
    private var telling = false
    private var roundEnded: [Int: CheckedContinuation<Void, Never>] = [:]
    private var lastWaiter = 0

    struct Advertised: Equatable {
        var titles: [String]
        var maxVolume: Int
        var bed: Bool
        var plans: [String] = []
        var calendars: [String] = []
        var alerts: [String] = []
    }

    init(topics: MQTTTopics, core: Jukebox, told: PlaysTold) {
        self.topics = topics
        self.core = core
        self.told = told
        (tellRequested, tellRequests) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func attach(_ client: MQTTClient) async {
        self.client = client
        tellableThrough = await core.lastPlay()
        await told.load(earlierRuns: await core.lastPlayOfEarlierRuns(), lastPlay: tellableThrough)
    }

    func connected() async {
        published = [:]
        await send(topics.availability, "online")
        await publishDiscovery()
        await publishChanges()
        tellRequests.yield()
    }

    /// What the core's events say of plays: one that started is told if connected then;
    /// those that ended are told in order, each once, as soon as the broker is there.
    func playEvent(_ event: JukeboxEvent) async {
        switch event {
        case .playing(let entry) where entry.alert == nil:
            guard let client, await client.isConnected else { return }
            _ = await client.publish(.init(topic: topics.state("playback"), text: PlaybackEvents.started(entry), qos: .atLeastOnce, retain: false))
        case .finished(let play):
            tellableThrough = max(tellableThrough, play.seq)
            tellRequests.yield()
        case .alert(let run?):
            // Its end is told as a play that ended (`alert-ended`); its soundings are not told.
            guard let client, await client.isConnected else { return }
            _ = await client.publish(.init(topic: topics.state("playback"), text: PlaybackEvents.alertStarted(run), qos: .atLeastOnce, retain: false))
        default:
            break
        }
    }

    /// Tells the plays that ended, each time it is asked, until cancelled: beside the state
    /// topics, so a broker slow to acknowledge never holds them up.
    func tellPlaysAsAsked() async {
        for await _ in tellRequested { await tellPlays() }
    }

    /// Tells the plays that ended and have not been told of, oldest first: each is on disk
    /// before it is published, and marked told (on disk too) once the broker has acknowledged
    /// it, so none is told twice across a reconnect or a restart. One that is not
    /// acknowledged is told on the next connection.
    private func tellPlays() async {
        telling = true
        defer {
            telling = false
            for waiter in roundEnded.values { waiter.resume() }
            roundEnded = [:]
        }
        guard let client, await client.isConnected else { return }
        let plays = await core.playsEnded(after: await told.through, through: tellableThrough)
        await told.noteGap(before: plays)
        for play in plays {
            let message = MQTTPacket.Publish(topic: topics.state("playback"), text: PlaybackEvents.ended(play), qos: .atLeastOnce, retain: false)
            guard await client.publishAcknowledged(message) else { return }
            await told.mark(play.seq)
        }
    }

    /// Returns once a round of telling under way has ended: stopping lets a play that the
    /// broker is acknowledging be marked told, so it is not told again after a restart.
    func finishTelling() async {
        guard telling else { return }
        lastWaiter += 1
        let id = lastWaiter
        // Given up on (the stop's time for goodbyes ran out): it returns at once.
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled { continuation.resume() } else { roundEnded[id] = continuation }
            }
        } onCancel: {
            Task { await self.stopWaiting(id) }
        }
    }

    private func stopWaiting(_ id: Int) { roundEnded.removeValue(forKey: id)?.resume() }

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
        var states: [(String, String)] = [
            ("now_playing", snapshot.queue.current?.clip.title ?? Self.nothing),
            // Home Assistant's siren is on while a clip it queued plays.
            ("siren", snapshot.queue.current?.origin.requester?.frontEnd == .siren ? "ON" : "OFF"),
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
            // Home Assistant's update entity: the version installed, as JSON.
            ("update", #"{"installed_version":"\#(JukeboxVersion.current)"}"#),
        ]
        if let bed = snapshot.player.bed { states.append(("music", bed.on ? "ON" : "OFF")) }
        for alert in snapshot.session.alerts { states.append(("alert_\(alert.name)", snapshot.queue.alert?.name == alert.name ? "ON" : "OFF")) }
        states += plans(snapshot)
        return states
    }

    /// Today's plan (the select's state: the plan in effect, or `automatic` with none),
    /// tomorrow's, and each calendar's health; nothing without plans.
    static func plans(_ snapshot: JukeboxSnapshot) -> [(String, String)] {
        guard let today = snapshot.todayPlan else { return [] }
        var states = [
            ("plan_today", today.choice?.plan ?? MQTTCommands.automatic),
            ("plan_tomorrow", snapshot.tomorrowPlan?.choice?.plan ?? "no plan"),
        ]
        for calendar in snapshot.calendars {
            let health = if let problem = calendar.problem { "failing: \(problem)" } else if calendar.readAt == nil { "not read yet" } else { "ok" }
            // A sensor's state is at most 255 characters.
            states.append(("calendar_\(calendar.name)", String(health.prefix(255))))
        }
        return states
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
            bed: snapshot.player.bed != nil, plans: snapshot.session.dayPlans?.planNames ?? [],
            calendars: snapshot.session.dayPlans?.calendars.map(\.name) ?? [], alerts: snapshot.session.alerts.map(\.name))
    }

    func publishDiscovery() async {
        await publishDiscovery(await core.snapshot())
    }

    private func publishDiscovery(_ snapshot: JukeboxSnapshot) async {
        guard topics.discovery, let client, await client.isConnected else { return }
        let advertised = Self.advertised(snapshot)
        self.advertised = advertised
        let discovery = HomeAssistantDiscovery(
            topics: topics, sessionName: snapshot.session.name, titles: advertised.titles, maxVolume: advertised.maxVolume, bed: advertised.bed,
            plans: advertised.plans, calendars: advertised.calendars, alerts: advertised.alerts)
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
