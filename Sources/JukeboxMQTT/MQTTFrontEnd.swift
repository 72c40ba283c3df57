import FoundationEssentials
import JukeboxCore
import Logging
import MQTT
import ServiceLifecycle

/// MQTT as one more front end: jukeboxd's state on retained topics under the session's
/// `topic`, commands on `TOPIC/command/NAME` mapped to the same core commands as the socket's,
/// and Home Assistant discovery. A broker that is away never holds up playback or the socket:
/// the client tries again in the background and state is published afresh on every connection.
public struct MQTTFrontEnd: Service {
    let settings: MQTTSettings
    let password: String?
    let core: Jukebox
    let logger: Logger
    /// Where MQTT keeps the count of plays it has told of; nil: in memory only.
    let toldFile: String?

    /// `statePath`: the daemon's state file, beside which MQTT keeps its count of the plays
    /// it has told of (`STATE.mqtt-told`); nil: it keeps it in memory.
    public init(settings: MQTTSettings, password: String?, core: Jukebox, statePath: String? = nil, logger: Logger) {
        self.settings = settings
        self.password = password
        self.core = core
        self.logger = logger
        toldFile = statePath.map(PlaysTold.file(besideState:))
    }

    public func run() async throws {
        let topics = MQTTTopics(settings: settings)
        let state = StatePublisher(topics: topics, core: core, told: PlaysTold(path: toldFile, logger: logger))
        let configuration = MQTTConfiguration(
            host: settings.host, port: settings.port, clientID: topics.nodeID, username: settings.username, password: password,
            keepAlive: .seconds(60), will: .init(topic: topics.availability, text: "offline", qos: .atLeastOnce, retain: true),
            subscriptions: [.init(topics.command("+"))] + (settings.discovery ? [.init(topics.homeAssistantStatus)] : []))
        let client = MQTTClient(configuration: configuration, logger: logger) {
            await state.connected()
        }
        await state.attach(client)
        let commands = MQTTCommands(topics: topics, core: core, logger: logger) {
            await state.publishDiscovery()
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            group.addTask { await state.tellPlaysAsAsked() }
            group.addTask {
                for await message in client.messages {
                    await commands.handle(message)
                    await message.acknowledge()
                }
            }
            group.addTask {
                for await event in core.events.subscribe() {
                    await state.publishChanges()
                    await state.playEvent(event)
                }
            }
            group.addTask {
                // Stopping: say so while still connected; the client then disconnects cleanly.
                try? await gracefulShutdown()
                // A broker that does not read cannot hold the daemon's stop up.
                await MQTTClient.bounded(MQTTClient.goodbyeTimeout) {
                    await state.finishTelling()
                    await state.goingOffline()
                }
            }
            _ = await group.next()
            group.cancelAll()
        }
    }
}
