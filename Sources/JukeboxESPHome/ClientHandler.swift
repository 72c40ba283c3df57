import ESPHomeAPI
import JukeboxCore
import JukeboxProtocol
import Logging
import NIOCore
import SwiftProtobuf

/// One Home Assistant connection: its messages read in order, the state pushed once it
/// subscribes, and a watch over the handshake and the keepalive.
struct ClientHandler {
    let context: ClientContext
    let connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    /// Taken as it connects: a closed channel no longer knows it.
    let peer: String

    init(context: ClientContext, connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) {
        self.context = context
        self.connection = connection
        peer = connection.channel.remoteAddress?.ipAddress ?? "an unknown address"
    }

    /// The API version jukeboxd speaks (ESPHome's api.proto of aioesphomeapi 46.23.0).
    static let apiVersion = (major: UInt32(1), minor: UInt32(13))
    /// The ESPHome release whose API this is, which Home Assistant shows and compares.
    static let esphomeVersion = "2025.12.0"

    private var logger: Logger { context.logger }

    /// Serves the connection; `closed` is called once it has ended, before the media it asked
    /// for has all been fetched (the core bounds those fetches, whoever asked).
    func serve(closed: @Sendable () -> Void = {}) async {
        guard let state = try? ESPHomeServerConnection(psk: context.settings.encryptionKey, identity: context.identity.serverIdentity) else {
            try? await connection.executeThenClose { _, _ in }
            closed()
            return
        }
        let link = ClientLink(connection: state, channel: connection.channel, maxUnsentBytes: context.limits.maxUnsentBytes)
        let media = MediaWork(limit: context.limits.maxWaitingMedia)
        // The media asked for is fetched and queued even if the connection ends first (Home
        // Assistant has been told nothing else); each fetch is bounded, and so is their number.
        await withDiscardingTaskGroup { outer in
            outer.addTask { await media.run { job in await perform(job, link: link) } }
            do {
                try await connection.executeThenClose { inbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { tasks in
                        tasks.addTask { await handshakeDeadline(link) }
                        tasks.addTask { await keepalive(link) }
                        var subscribed = false
                        reading: for try await buffer in inbound {
                            let received = await link.receive(buffer)
                            await link.write(received.write)
                            for message in received.messages {
                                switch await handle(message, link: link, media: media) {
                                case .goOn: break
                                case .close: break reading
                                case .subscribe:
                                    guard !subscribed else { continue }
                                    subscribed = true
                                    tasks.addTask { await pushStates(link) }
                                }
                            }
                            if let refusal = received.refusal {
                                refuse("\(refusal.words)")
                                break reading
                            }
                        }
                        if link.unsent.overrun {
                            refuse("it left over \(context.limits.maxUnsentBytes / 1024) KB unread")
                        }
                        tasks.cancelAll()
                    }
                }
            } catch {
                logger.debug("Home Assistant's media player: the connection from \(peer) failed: \(error)")
            }
            logger.debug("Home Assistant's media player: the connection from \(peer) ended")
            closed()
            media.finish()
        }
    }

    private func refuse(_ why: String) {
        for line in context.refusals.admit("Home Assistant's media player: closed a connection from \(peer): \(why)") {
            logger.warning("\(line)")
        }
    }

    enum Action { case goOn, close, subscribe }

    private func handle(_ message: ESPHomeServerConnection.Message, link: ClientLink, media: MediaWork) async -> Action {
        do {
            switch message.type {
            case ESPHomeMessageType.helloRequest:
                let hello = try ESPHelloRequest(serializedBytes: message.data)
                logger.info("Home Assistant's media player: \(hello.clientInfo.isEmpty ? "a client" : "\"\(hello.clientInfo.prefix(64))\"") connected from \(peer)")
                await link.markGreeted()
                var answer = ESPHelloResponse()
                answer.apiVersionMajor = Self.apiVersion.major
                answer.apiVersionMinor = Self.apiVersion.minor
                answer.serverInfo = "jukeboxd \(JukeboxVersion.current)"
                answer.name = context.identity.nodeName
                await link.send(ESPHomeMessageType.helloResponse, answer)
            case ESPHomeMessageType.disconnectRequest:
                await link.send(ESPHomeMessageType.disconnectResponse, ESPDisconnectResponse())
                return .close
            case ESPHomeMessageType.disconnectResponse:
                return .close
            case ESPHomeMessageType.pingRequest:
                await link.send(ESPHomeMessageType.pingResponse, ESPPingResponse())
            case ESPHomeMessageType.deviceInfoRequest:
                await link.send(ESPHomeMessageType.deviceInfoResponse, deviceInfo())
            case ESPHomeMessageType.listEntitiesRequest:
                await link.send(ESPHomeMessageType.listEntitiesMediaPlayerResponse, MediaPlayerView.entity())
                await link.send(ESPHomeMessageType.listEntitiesDoneResponse, ESPListEntitiesDoneResponse())
            case ESPHomeMessageType.subscribeStatesRequest:
                return .subscribe
            case ESPHomeMessageType.mediaPlayerCommandRequest:
                let command = try ESPMediaPlayerCommandRequest(serializedBytes: message.data)
                guard command.key == MediaPlayerView.key else { break }
                if command.hasMediaURL_p {
                    let job = MediaWork.Job.play(address: command.mediaURL, announce: command.hasAnnouncement_p && command.announcement)
                    if !media.add(job) { refuseCommand("the media at \(MediaLimits.shown(command.mediaURL)): \(media.limit) are being fetched for this connection already") }
                }
                if let refusal = await context.commands.handle(command) { refuseCommand(refusal) }
            case ESPHomeMessageType.voiceAssistantAnnounceRequest:
                let request = try ESPVoiceAssistantAnnounceRequest(serializedBytes: message.data)
                if request.startConversation {
                    refuseCommand("an announcement that starts a conversation: jukeboxd has no microphone")
                    await announced(false, link: link)
                } else if !media.add(.announce(request)) {
                    refuseCommand("an announcement: \(media.limit) are under way for this connection already")
                    await announced(false, link: link)
                }
            case ESPHomeMessageType.voiceAssistantConfigurationRequest:
                // No microphone, so no wake words.
                await link.send(ESPHomeMessageType.voiceAssistantConfigurationResponse, ESPVoiceAssistantConfigurationResponse())
            default:
                // What a client may send but a speaker has no use for (logs, Home Assistant's
                // states and services, Bluetooth): nothing to answer.
                break
            }
        } catch {
            refuse("a message of type \(message.type) could not be read as api.proto says")
            return .close
        }
        return .goOn
    }

    private func refuseCommand(_ what: String) {
        for line in context.refusals.admit("Home Assistant's media player: refused \(what)") { logger.warning("\(line)") }
    }

    private func announced(_ success: Bool, link: ClientLink) async {
        var finished = ESPVoiceAssistantAnnounceFinished()
        finished.success = success
        await link.send(ESPHomeMessageType.voiceAssistantAnnounceFinished, finished)
    }

    /// Fetches and queues one media request; for an announcement, returns the wait for its
    /// end, after which Home Assistant is told it finished.
    private func perform(_ job: MediaWork.Job, link: ClientLink) async -> (@Sendable () async -> Void)? {
        switch job {
        case .play(let address, let announce):
            if case .failure(let refusal) = await context.commands.play(address, now: announce) { refuseCommand(refusal.message) }
            return nil
        case .announce(let request):
            // Followed from before it is queued, so its end cannot be missed.
            let events = context.core.events.subscribe()
            let chime = request.preannounceMediaID.isEmpty ? nil : request.preannounceMediaID
            switch await context.commands.play(request.mediaID, before: chime, title: "Home Assistant's announcement", now: true) {
            case .failure(let refusal):
                refuseCommand(refusal.message)
                await announced(false, link: link)
                return nil
            case .success(let ticket):
                return {
                    await announced(await Self.played(ticket, in: events), link: link)
                }
            }
        }
    }

    /// Waits for the entry's end: true once it played to its end, false if it failed, was
    /// stopped or removed.
    static func played(_ ticket: UInt64, in events: AsyncStream<JukeboxEvent>) async -> Bool {
        for await event in events {
            switch event {
            case .finished(let record) where record.entry.ticket == ticket:
                if case .completed = record.outcome { return true }
                return false
            case .removed(let tickets) where tickets.contains(ticket):
                return false
            default:
                continue
            }
        }
        return false
    }

    private func deviceInfo() -> ESPDeviceInfoResponse {
        var info = ESPDeviceInfoResponse()
        info.name = context.identity.nodeName
        info.friendlyName = context.identity.friendlyName
        info.macAddress = context.identity.macAddress
        info.esphomeVersion = Self.esphomeVersion
        info.model = "jukeboxd"
        info.manufacturer = "jukeboxd"
        info.projectName = "jukeboxd.jukeboxd"
        info.projectVersion = JukeboxVersion.current
        // The voice assistant (1) with announcements (16), so Home Assistant also makes an
        // assist_satellite entity that can announce; no microphone, so no conversation.
        info.voiceAssistantFeatureFlags = 1 | 16
        info.apiEncryptionSupported = context.settings.encryptionKey != nil
        return info
    }

    /// The media player's state now and at each change, only when it changed. Subscribed
    /// before the first snapshot, so no change between the two is missed.
    private func pushStates(_ link: ClientLink) async {
        let events = context.core.events.subscribe()
        var last: MediaPlayerView.State?
        func push() async {
            let state = MediaPlayerView.State(await context.core.snapshot())
            guard state != last else { return }
            last = state
            await link.send(ESPHomeMessageType.mediaPlayerStateResponse, state.message)
        }
        await push()
        for await _ in events { await push() }
    }

    /// Closes a connection that has not said hello when the handshake's time is up.
    private func handshakeDeadline(_ link: ClientLink) async {
        let limit = context.limits.handshakeTimeout
        guard (try? await Task.sleep(for: limit)) != nil, !(await link.greeted) else { return }
        refuse("it did not finish its handshake within \(DurationText.format(limit))")
        connection.channel.close(promise: nil)
    }

    /// Closes a connection that stays silent: pinged after `pingAfter` without a byte from it,
    /// closed if still silent `dropAfter − pingAfter` after the ping.
    private func keepalive(_ link: ClientLink) async {
        let limits = context.limits
        while !Task.isCancelled {
            let now = ContinuousClock.now
            let heard = await link.lastHeard
            let next: ContinuousClock.Instant
            if let pinged = await link.pingedAt, pinged > heard {
                if now - pinged >= limits.dropAfter - limits.pingAfter {
                    refuse("it answered nothing for \(DurationText.format(limits.dropAfter))")
                    connection.channel.close(promise: nil)
                    return
                }
                next = pinged + (limits.dropAfter - limits.pingAfter)
            } else if now - heard >= limits.pingAfter {
                await link.markPinged()
                await link.send(ESPHomeMessageType.pingRequest, ESPPingRequest())
                continue
            } else {
                next = heard + limits.pingAfter
            }
            guard (try? await Task.sleep(until: next)) != nil else { return }
        }
    }
}
