import NIOCore

/// Splits the byte stream into newline-terminated lines. A line longer than `maxLength`
/// yields `.tooLong` once, after which the connection is answered and closed: the peer is
/// either broken or hostile, and buffering without bound would let it exhaust memory.
/// While `raw` expects an upload's bytes, they are passed on as they come, in `.raw` pieces,
/// never buffered whole.
struct LineFrameDecoder: ByteToMessageDecoder {
    enum Frame: Sendable {
        case line([UInt8])
        case tooLong
        case raw([UInt8])
    }

    typealias InboundOut = Frame
    let maxLength: Int
    let raw: PendingUploadBytes
    private var overflowed = false

    init(maxLength: Int, raw: PendingUploadBytes = PendingUploadBytes()) {
        self.maxLength = maxLength
        self.raw = raw
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard !overflowed else {
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return .needMoreData
        }
        let rawCount = raw.take(upTo: buffer.readableBytes)
        if rawCount > 0 {
            context.fireChannelRead(wrapInboundOut(.raw(buffer.readBytes(length: rawCount) ?? [])))
            return .continue
        }
        if let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - buffer.readerIndex
            guard length <= maxLength else { return overflow(context, &buffer) }
            var line = buffer.readBytes(length: length) ?? []
            buffer.moveReaderIndex(forwardBy: 1)
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        return buffer.readableBytes > maxLength ? overflow(context, &buffer) : .needMoreData
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A last line without its newline is still a request.
        if try decode(context: context, buffer: &buffer) == .continue { return .continue }
        if !overflowed, buffer.readableBytes > 0, let rest = buffer.readBytes(length: buffer.readableBytes) {
            context.fireChannelRead(wrapInboundOut(.line(rest)))
        }
        return .needMoreData
    }

    private mutating func overflow(_ context: ChannelHandlerContext, _ buffer: inout ByteBuffer) -> DecodingState {
        overflowed = true
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        context.fireChannelRead(wrapInboundOut(.tooLong))
        return .needMoreData
    }
}
