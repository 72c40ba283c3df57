@testable import ESPHomeAPI
import Testing

/// The frame reader: both kinds of frame, in pieces and together, and its limits at, under
/// and over.
@Suite struct ESPHomeFrameReaderTests {
    @Test func framesInPiecesAndTogether() throws {
        var reader = ESPHomeFrameReader()
        let bytes = ESPHomeFrameWriter.encrypted([1, 2, 3]) + ESPHomeFrameWriter.plaintext(type: 300, data: Array(repeating: 9, count: 200))
        for byte in bytes.dropLast() {
            reader.append([byte])
        }
        #expect(try reader.next() == .encrypted([1, 2, 3]))
        #expect(try reader.next() == nil, "the second frame is not whole yet")
        reader.append([bytes.last!])
        #expect(try reader.next() == .plaintext(type: 300, data: Array(repeating: 9, count: 200)))
        #expect(try reader.next() == nil)
        #expect(reader.waitingBytes == 0)
    }

    @Test(arguments: [65_534, 65_535])
    func aPlaintextFrameUpToTheLimitIsRead(size: Int) throws {
        var reader = ESPHomeFrameReader()
        reader.append(ESPHomeFrameWriter.plaintext(type: 7, data: Array(repeating: 1, count: size)))
        #expect(try reader.next() == .plaintext(type: 7, data: Array(repeating: 1, count: size)))
    }

    @Test func aPlaintextFrameOverTheLimitIsRefusedBeforeItsDataComes() throws {
        var reader = ESPHomeFrameReader()
        reader.append([0x00] + ESPHomeFrameWriter.varint(65_536) + [7])
        #expect(throws: ESPHomeFrameError.tooLarge(65_536)) { try reader.next() }
    }

    @Test func anEncryptedFrameAtItsLargestIsRead() throws {
        var reader = ESPHomeFrameReader()
        reader.append(ESPHomeFrameWriter.encrypted(Array(repeating: 5, count: 65_535)))
        #expect(try reader.next() == .encrypted(Array(repeating: 5, count: 65_535)))
    }

    @Test func malformedFramesAreRefusedInWords() throws {
        var badIndicator = ESPHomeFrameReader()
        badIndicator.append([0x02, 0, 0])
        #expect(throws: ESPHomeFrameError.badIndicator(2)) { try badIndicator.next() }
        var longVarint = ESPHomeFrameReader()
        longVarint.append([0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])
        #expect(throws: ESPHomeFrameError.malformedVarint) { try longVarint.next() }
        var bigType = ESPHomeFrameReader()
        bigType.append([0x00, 0x00] + ESPHomeFrameWriter.varint(65_536))
        #expect(throws: ESPHomeFrameError.typeOutOfRange(65_536)) { try bigType.next() }
        #expect(ESPHomeFrameError.tooLarge(70_000).words == "a frame of 70000 bytes, over the 65535 a frame may have")
    }
}
