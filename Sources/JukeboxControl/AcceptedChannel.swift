import NIOCore

/// A client connection as accepted, before its async wrapper exists.
struct AcceptedChannel: Sendable {
    let channel: any Channel
    let hold: NIOLoopBound<InboundBuffer>
    /// Tells the line decoder when an upload's raw bytes come.
    let raw: PendingUploadBytes

    init(channel: any Channel, hold: InboundBuffer, raw: PendingUploadBytes) {
        self.channel = channel
        self.raw = raw
        self.hold = NIOLoopBound(hold, eventLoop: channel.eventLoop)
    }

    /// Wraps the channel for async use and releases what the hold kept to the wrapper.
    func wrap() async throws -> NIOAsyncChannel<LineFrameDecoder.Frame, ByteBuffer> {
        try await channel.eventLoop.submit { [channel, hold] in
            let wrapped = try NIOAsyncChannel<LineFrameDecoder.Frame, ByteBuffer>(wrappingChannelSynchronously: channel)
            channel.pipeline.syncOperations.removeHandler(hold.value, promise: nil)
            return wrapped
        }.get()
    }
}
