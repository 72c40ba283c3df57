import ESPHomeAPI
import JukeboxCore
import JukeboxCoreTestSupport
@testable import JukeboxESPHome
import JukeboxTestSupport
import Testing

/// The front end's limits over real TCP, each at, under and over: clients at once, the frame
/// size, the handshake's time, the keepalive, and a client that does not read.
@Suite(.timeLimit(.minutes(1)))
struct ESPHomeServerTests {
    let rig = FrontEndRig()

    @Test func fourClientsAreServedAndAFifthIsClosed() async throws {
        try await rig.run { port, _ in
            try await RawClient.with(port: port, count: 3) { three in
                for client in three { #expect(try await client.hello() == ESPHomeMessageType.helloResponse) }
                try await RawClient.with(port: port) { fourth in
                    #expect(try await fourth.hello() == ESPHomeMessageType.helloResponse, "the fourth is served")
                    try await RawClient.with(port: port) { (fifth: RawClient) async throws in
                        try? await fifth.send(ESPHomeMessageType.helloRequest)
                        #expect(try await fifth.untilClosed().isEmpty, "the fifth is closed unanswered")
                    }
                    // The others are still served.
                    try await three[0].send(ESPHomeMessageType.pingRequest)
                    #expect(try await three[0].next() == ESPHomeMessageType.pingResponse)
                }
                // One gone: a new one gets in.
                await rig.log.waitFor("the connection from 127.0.0.1 ended")
                try await RawClient.with(port: port) { (again: RawClient) async throws in
                    #expect(try await again.hello() == ESPHomeMessageType.helloResponse)
                }
            }
        }
        #expect(rig.log.contains("4 clients are connected, the most it serves; closing a new one from 127.0.0.1"))
    }

    @Test(arguments: [65_534, 65_535])
    func aFrameUpTo65535BytesIsRead(size: Int) async throws {
        try await rig.run { port, _ in
            try await RawClient.with(port: port) { client in
                #expect(try await client.hello() == ESPHomeMessageType.helloResponse)
                try await client.send(ESPHomeMessageType.pingRequest, Array(repeating: 0, count: size))
                #expect(try await client.next() == ESPHomeMessageType.pingResponse)
            }
        }
    }

    @Test func aFrameOver65535BytesClosesThatConnectionOnly() async throws {
        try await rig.run { port, _ in
            try await RawClient.with(port: port, count: 2) { clients in
                for client in clients { #expect(try await client.hello() == ESPHomeMessageType.helloResponse) }
                try await clients[0].send(ESPHomeMessageType.pingRequest, Array(repeating: 0, count: 65_536))
                #expect(try await clients[0].untilClosed().isEmpty)
                try await clients[1].send(ESPHomeMessageType.pingRequest)
                #expect(try await clients[1].next() == ESPHomeMessageType.pingResponse)
            }
        }
        #expect(rig.log.contains("closed a connection from 127.0.0.1: a frame of 65536 bytes, over the 65535 a frame may have"))
    }

    @Test func aClientThatDoesNotSayHelloInTimeIsClosedAndOneThatDoesIsKept() async throws {
        var limits = ESPHomeLimits()
        limits.handshakeTimeout = .milliseconds(300)
        try await rig.run(limits: limits) { port, _ in
            try await RawClient.with(port: port, count: 2) { clients in
                #expect(try await clients[1].hello() == ESPHomeMessageType.helloResponse)
                #expect(try await clients[0].untilClosed().isEmpty, "silent past the handshake's time: closed")
                try await clients[1].send(ESPHomeMessageType.pingRequest)
                #expect(try await clients[1].next() == ESPHomeMessageType.pingResponse, "greeted in time: kept")
            }
        }
        #expect(rig.log.contains("it did not finish its handshake within 0.3s"))
    }

    @Test func aSilentClientIsPingedThenClosedAndOneThatAnswersIsKept() async throws {
        var limits = ESPHomeLimits()
        limits.pingAfter = .seconds(1)
        limits.dropAfter = .seconds(4)
        try await rig.run(limits: limits) { port, _ in
            try await RawClient.with(port: port, count: 2) { clients in
                for client in clients { #expect(try await client.hello() == ESPHomeMessageType.helloResponse) }
                // The first answers two pings; the second answers none.
                for _ in 0..<2 {
                    #expect(try await clients[0].next() == ESPHomeMessageType.pingRequest)
                    try await clients[0].send(ESPHomeMessageType.pingResponse)
                }
                #expect(try await clients[1].untilClosed() == [ESPHomeMessageType.pingRequest], "pinged once, then closed")
                try await clients[0].send(ESPHomeMessageType.deviceInfoRequest)
                var types: [UInt16] = []
                while let type = try await clients[0].next(), type != ESPHomeMessageType.deviceInfoResponse { types.append(type) }
                #expect(types.allSatisfy { $0 == ESPHomeMessageType.pingRequest }, "still served: \(types)")
            }
        }
        #expect(rig.log.contains("it answered nothing for 4s"))
    }

    @Test func aClientThatNeverReadsIsClosedOnceItsUnreadAnswersPassTheLimit() async throws {
        var limits = ESPHomeLimits()
        limits.maxUnsentBytes = 64 * 1024
        try await rig.run(limits: limits) { port, _ in
            try await RawClient.with(port: port) { (other: RawClient) async throws in
                #expect(try await other.hello() == ESPHomeMessageType.helloResponse)
                try await RawClient.with(port: port, receiveBuffer: 4096) { (silent: RawClient) async throws in
                    #expect(try await silent.hello() == ESPHomeMessageType.helloResponse)
                    // Each 3-byte request is answered with the entity list: over 100 bytes. Sent
                    // until the server closes; never read. The kernel holds 64 KB of answers on
                    // the server's side and a few on the client's, then jukeboxd 64 KB more.
                    let request = ESPHomeFrameWriter.plaintext(type: ESPHomeMessageType.listEntitiesRequest, data: [])
                    let burst = Array([[UInt8]](repeating: request, count: 1_000).joined())
                    // Until the server closes it (what it has read is answered first), or 100 MB.
                    var sent = 0
                    while sent < 33_000 {
                        do { try await silent.sendBytes(burst) } catch { break }
                        sent += 1
                    }
                    #expect(sent < 33_000, "the server closed the connection")
                }
                try await other.send(ESPHomeMessageType.pingRequest)
                #expect(try await other.next() == ESPHomeMessageType.pingResponse, "the other client is served")
            }
        }
        #expect(rig.log.contains("it left over 64 KB unread"))
    }

    @Test func theUnsentCountIsTakenUpToItsLimitAndRefusedOverIt() {
        let under = UnsentBytes(limit: 100)
        #expect(under.take(99))
        #expect(!under.overrun)
        let at = UnsentBytes(limit: 100)
        #expect(at.take(60) && at.take(40), "at the limit")
        at.give(40)
        #expect(at.count == 60)
        let over = UnsentBytes(limit: 100)
        #expect(over.take(100))
        #expect(!over.take(1), "one byte over")
        over.give(100)
        #expect(!over.take(1), "once overrun, the connection is done")
        #expect(over.overrun)
    }
}
