import ESPHomeAPI
import NIOCore
import Synchronization
import SwiftProtobuf

/// One client's connection: the protocol's state and the socket it writes to. Messages are
/// sealed and handed to the socket in one step, so they go out in the order they were
/// sealed. Writes are not waited for, so a client that does not read never holds up the
/// reading of its messages; instead, one that leaves more than `maxUnsentBytes` unread is
/// closed.
actor ClientLink {
    private var connection: ESPHomeServerConnection
    let channel: any Channel
    let unsent: UnsentBytes
    /// When the client last sent a byte, and when it was last pinged.
    private(set) var lastHeard = ContinuousClock.now
    private(set) var pingedAt: ContinuousClock.Instant?
    /// The client said hello.
    private(set) var greeted = false

    init(connection: ESPHomeServerConnection, channel: any Channel, maxUnsentBytes: Int) {
        self.connection = connection
        self.channel = channel
        unsent = UnsentBytes(limit: maxUnsentBytes)
    }

    func receive(_ buffer: ByteBuffer) -> ESPHomeServerConnection.Received {
        lastHeard = .now
        return connection.receive(buffer.readableBytesView)
    }

    func markGreeted() { greeted = true }
    func markPinged() { pingedAt = .now }

    /// Writes bytes the protocol made (the handshake's answers, a refusal's words), and
    /// returns once the socket has taken them, so that a close after them does not drop them.
    func write(_ frames: [[UInt8]]) async {
        var last: EventLoopFuture<Void>?
        for frame in frames { last = put(frame) }
        try? await last?.get()
    }

    /// Seals and writes one message.
    func send(_ type: UInt16, _ message: some SwiftProtobuf.Message) {
        guard let data: [UInt8] = try? message.serializedBytes(), let frame = try? connection.frame(type: type, data: data) else { return }
        put(frame)
    }

    @discardableResult
    private func put(_ frame: [UInt8]) -> EventLoopFuture<Void>? {
        guard unsent.take(frame.count) else {
            channel.close(promise: nil)
            return nil
        }
        // Handed to the channel before any other message can be sealed: the order holds.
        let written = channel.writeAndFlush(ByteBuffer(bytes: frame))
        written.whenComplete { [unsent] _ in unsent.give(frame.count) }
        return written
    }
}

/// The bytes written to a client that the socket has not taken yet, within a limit. Past the
/// limit the connection is closed, and stays marked as overrun.
final class UnsentBytes: Sendable {
    let limit: Int
    private let state = Mutex((count: 0, overrun: false))

    init(limit: Int) { self.limit = limit }

    /// Counts `bytes` in; false, and overrun from then on, when they would pass the limit.
    func take(_ bytes: Int) -> Bool {
        state.withLock { state in
            guard !state.overrun, state.count + bytes <= limit else {
                state.overrun = true
                return false
            }
            state.count += bytes
            return true
        }
    }

    func give(_ bytes: Int) { state.withLock { $0.count -= bytes } }

    var count: Int { state.withLock { $0.count } }
    var overrun: Bool { state.withLock { $0.overrun } }
}
