import NIOCore

/// Holds what a new connection receives (lines, the client's half-close) until the
/// connection's async wrapper is installed behind it, then hands it all on in order.
/// Accepted connections therefore travel through the server's queue as plain channels: one
/// still queued when the server closes holds no async writer that could trap when dropped,
/// and a client that writes and half-closes at once loses nothing.
final class InboundBuffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = LineFrameDecoder.Frame
    typealias InboundOut = LineFrameDecoder.Frame

    private enum Held {
        case read(NIOAny)
        case event(Any)
    }

    private var held: [Held] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        held.append(.read(data))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        held.append(.event(event))
    }

    func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        let events = held
        held = []
        var pendingReads = false
        for item in events {
            switch item {
            case .read(let data):
                context.fireChannelRead(data)
                pendingReads = true
            case .event(let event):
                // Reads are delivered in batches on read-complete; close the batch before an
                // event such as the client's half-close so nothing is left behind it.
                if pendingReads { context.fireChannelReadComplete() }
                pendingReads = false
                context.fireUserInboundEventTriggered(event)
            }
        }
        if pendingReads { context.fireChannelReadComplete() }
        context.leavePipeline(removalToken: removalToken)
    }
}
