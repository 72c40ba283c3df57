import ESPHomeAPI
import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxESPHome
import JukeboxTestSupport
import SwiftProtobuf
import Synchronization
import Testing

/// A connection's media requests, over real TCP: at most 4 being fetched or waiting to be
/// heard at once; a fifth announcement is answered as failed at once, and the four go on.
@Suite(.timeLimit(.minutes(1)))
struct MediaWorkTests {
    let rig = FrontEndRig()

    /// Holds every fetch until it is let go; then hands over a short WAV.
    final class HeldMedia: MediaFetcher {
        let started = Mutex(0)
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        static let tone = WAVFile.bytes(Array(repeating: 0.1, count: 800), encoding: .s16, rate: 8000, channels: 1)

        func fetch(_ address: String, into receive: @escaping @Sendable ([UInt8]) async throws -> Void) async throws {
            started.withLock { $0 += 1 }
            for await _ in gate { break }
            try await receive(Self.tone)
        }
    }

    func announcement(_ index: Int) throws -> [UInt8] {
        var request = ESPVoiceAssistantAnnounceRequest()
        request.mediaID = "http://ha.local/tts/\(index).wav"
        return try request.serializedBytes()
    }

    @Test func aFifthAnnouncementIsAnsweredAsFailedAndTheFourGoOn() async throws {
        let held = HeldMedia()
        try await rig.run(mediaFetcher: held) { port, test in
            try await RawClient.with(port: port) { client in
                #expect(try await client.hello() == ESPHomeMessageType.helloResponse)
                for index in 1...5 { try await client.send(ESPHomeMessageType.voiceAssistantAnnounceRequest, try announcement(index)) }
                let answer = try #require(try await client.nextMessage())
                #expect(answer.type == ESPHomeMessageType.voiceAssistantAnnounceFinished)
                #expect(try ESPVoiceAssistantAnnounceFinished(serializedBytes: answer.data).success == false)
                // The four are let through one after another, and queued in their order.
                let events = test.core.events.subscribe()
                for _ in 1...4 { held.open.yield() }
                var queuedCount = 0
                for await event in events {
                    if case .queued = event { queuedCount += 1 }
                    if queuedCount == 4 { break }
                }
                let queued = await test.core.snapshot().queue.waiting
                #expect(queued.map(\.clip.source.file) == ["1.wav", "2.wav", "3.wav", "4.wav"])
                #expect(queued.allSatisfy { $0.urgent && $0.origin.requester?.frontEnd == .esphome })
            }
        }
        #expect(rig.log.contains("refused an announcement: 4 are under way for this connection already"))
    }

    @Test func aConnectionThatHasEndedStopsCountingWhileItsMediaIsFetched() async throws {
        let held = HeldMedia()
        var limits = ESPHomeLimits()
        limits.maxClients = 1
        try await rig.run(limits: limits, mediaFetcher: held) { port, test in
            try await RawClient.with(port: port) { client in
                #expect(try await client.hello() == ESPHomeMessageType.helloResponse)
                try await client.send(ESPHomeMessageType.voiceAssistantAnnounceRequest, try announcement(1))
            }
            await rig.log.waitFor("the connection from 127.0.0.1 ended")
            // Its announcement is still being fetched; the one client allowed is a new one.
            try await RawClient.with(port: port) { (again: RawClient) async throws in
                #expect(try await again.hello() == ESPHomeMessageType.helloResponse, "served, not closed")
            }
            let events = test.core.events.subscribe()
            held.open.yield()
            for await event in events {
                if case .queued = event { break }
            }
            #expect(await test.core.snapshot().queue.waiting.map(\.clip.source.file) == ["1.wav"], "the announcement of the connection that ended")
        }
        #expect(!rig.log.contains("clients are connected, the most it serves"))
    }

    @Test func anAnnouncementThatWouldStartAConversationIsRefused() async throws {
        try await rig.run(mediaFetcher: HeldMedia()) { port, _ in
            try await RawClient.with(port: port) { client in
                #expect(try await client.hello() == ESPHomeMessageType.helloResponse)
                var request = ESPVoiceAssistantAnnounceRequest()
                request.mediaID = "http://ha.local/tts/1.wav"
                request.startConversation = true
                try await client.send(ESPHomeMessageType.voiceAssistantAnnounceRequest, try request.serializedBytes())
                let answer = try #require(try await client.nextMessage())
                #expect(answer.type == ESPHomeMessageType.voiceAssistantAnnounceFinished)
                #expect(try ESPVoiceAssistantAnnounceFinished(serializedBytes: answer.data).success == false)
            }
        }
        #expect(rig.log.contains("refused an announcement that starts a conversation: jukeboxd has no microphone"))
    }
}
