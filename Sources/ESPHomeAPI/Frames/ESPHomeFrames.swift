/// One frame of ESPHome's native API, as it came off the wire.
public enum ESPHomeFrame: Equatable, Sendable {
    /// `01`, a 2-byte big-endian size, then that many bytes: a Noise handshake message or a
    /// sealed message.
    case encrypted([UInt8])
    /// `00`, the data's size and the message type as varints, then the data.
    case plaintext(type: UInt16, data: [UInt8])
}

/// Why the bytes a client sent are not frames. The connection that sent them is closed;
/// nothing else is.
public enum ESPHomeFrameError: Error, Equatable, Sendable {
    case badIndicator(UInt8)
    case tooLarge(Int)
    case malformedVarint
    case typeOutOfRange(UInt64)

    /// What went wrong, in words for the log.
    public var words: String {
        switch self {
        case .badIndicator(let byte):
            "a frame began with \(byte), which is neither plaintext (0) nor encrypted (1)"
        case .tooLarge(let size):
            "a frame of \(size) bytes, over the \(ESPHomeFrameReader.maxFrameBytes) a frame may have"
        case .malformedVarint:
            "a frame's size or type ran over 5 bytes"
        case .typeOutOfRange(let type):
            "a message type of \(type), over the 65 535 a type may be"
        }
    }
}

/// Cuts a client's bytes into frames. It holds at most one frame that is not whole yet, and
/// refuses a frame over `maxFrameBytes` before reading it.
public struct ESPHomeFrameReader: Sendable {
    /// What an encrypted frame's 2-byte size can say; a plaintext frame has the same bound.
    public static let maxFrameBytes = 65_535

    private var buffer: [UInt8] = []
    private var start = 0

    public init() {}

    /// The bytes received and not yet part of a returned frame.
    public var waitingBytes: Int { buffer.count - start }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole frame, or nil until more bytes come.
    public mutating func next() throws(ESPHomeFrameError) -> ESPHomeFrame? {
        guard start < buffer.count else { return nil }
        switch buffer[start] {
        case 0x01:
            guard buffer.count - start >= 3 else { return nil }
            let size = Int(buffer[start + 1]) << 8 | Int(buffer[start + 2])
            guard buffer.count - start >= 3 + size else { return nil }
            let payload = Array(buffer[(start + 3)..<(start + 3 + size)])
            consume(3 + size)
            return .encrypted(payload)
        case 0x00:
            var position = start + 1
            guard let size = try varint(at: &position) else { return nil }
            guard size <= UInt64(Self.maxFrameBytes) else { throw .tooLarge(Int(clamping: size)) }
            guard let type = try varint(at: &position) else { return nil }
            guard type <= UInt64(UInt16.max) else { throw .typeOutOfRange(type) }
            guard buffer.count - position >= Int(size) else { return nil }
            let data = Array(buffer[position..<(position + Int(size))])
            consume(position + Int(size) - start)
            return .plaintext(type: UInt16(type), data: data)
        case let byte:
            throw .badIndicator(byte)
        }
    }

    private mutating func consume(_ count: Int) {
        start += count
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 4 * 1024)
            start = 0
        }
    }

    /// A protobuf varint, at most 5 bytes; nil when not all of it is here.
    private func varint(at position: inout Int) throws(ESPHomeFrameError) -> UInt64? {
        var value: UInt64 = 0
        for index in 0..<5 {
            guard position < buffer.count else { return nil }
            let byte = buffer[position]
            position += 1
            value |= UInt64(byte & 0x7F) << (7 * UInt64(index))
            if byte & 0x80 == 0 { return value }
        }
        throw .malformedVarint
    }
}

/// Frames for the wire.
public enum ESPHomeFrameWriter {
    public static func encrypted(_ payload: [UInt8]) -> [UInt8] {
        precondition(payload.count <= ESPHomeFrameReader.maxFrameBytes, "an encrypted frame holds at most 65 535 bytes")
        return [0x01, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload
    }

    public static func plaintext(type: UInt16, data: [UInt8]) -> [UInt8] {
        [0x00] + varint(UInt64(data.count)) + varint(UInt64(type)) + data
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value != 0 { byte |= 0x80 }
            bytes.append(byte)
        } while value != 0
        return bytes
    }
}
