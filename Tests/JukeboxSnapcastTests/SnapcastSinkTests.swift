import Glibc
import JukeboxCore
import JukeboxTestSupport
import Testing
@testable import JukeboxSnapcast

/// The sink against a real FIFO, with the test reading it as snapserver does: one 20 ms chunk
/// per 20 ms.
@Suite("Snapcast pipe pacing")
struct SnapcastSinkTests {
    static let format = StreamFormat.snapcastDefault
    static var bytesPerSecond: Int { format.sampleRate * format.bits / 8 * format.channels }

    /// What the reader saw: every byte, and the most the pipe held at any of its reads.
    struct Reading: Sendable {
        var bytes: [UInt8] = []
        var mostQueued = 0
    }

    /// Reads `total` bytes from `descriptor` in 20 ms chunks on 20 ms ticks, noting what the
    /// pipe holds before each read, on a thread started at once. Its clock starts with the
    /// first byte, however late the test gets to writing. Gives up after 10 s.
    static func readLikeSnapserver(_ descriptor: Int32, total: Int) -> ThreadTask<Reading> {
        ThreadTask {
            var reading = Reading()
            let chunk = bytesPerSecond / 50
            var buffer = [UInt8](repeating: 0, count: chunk)
            var first = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&first, 1, 10_000)
            var tick = ContinuousClock.now
            let deadline = tick + .seconds(10)
            while reading.bytes.count < total, ContinuousClock.now < deadline {
                var queued: Int32 = 0
                _ = ioctl(descriptor, UInt(FIONREAD), &queued)
                reading.mostQueued = max(reading.mostQueued, Int(queued))
                let count = read(descriptor, &buffer, min(chunk, total - reading.bytes.count))
                if count > 0 { reading.bytes += buffer.prefix(count) }
                tick += .milliseconds(20)
                // The reader's clock, as snapserver's: a tick, not a wait for the writer.
                let left = tick - ContinuousClock.now
                if left > .zero { usleep(UInt32(left.components.attoseconds / 1_000_000_000_000)) }
            }
            return reading
        }
    }

    @Test func thePipeNeverHoldsMoreThan100msAndEveryByteArrivesInOrder() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("fifo")
        try #require(mkfifo(path, 0o600) == 0)
        // The reader opens first, as snapserver holds the pipe open while it runs.
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let sink = SnapcastSink(path: path, format: Self.format)
        let clip = AudioFormat(sampleFormat: .s16, sampleRate: 48_000, channels: 2)
        let taken = try await sink.open(clip)
        #expect(taken.sampleRate == 48_000 && taken.channels == 2)
        // One second of a ramp, in float samples as the player sends them.
        let frames = 48_000
        let samples = (0..<frames * 2).map { Float(($0 / 2) % 20_000 - 10_000) / 32_768 }
        let total = frames * 4
        let reading = Self.readLikeSnapserver(reader, total: total)
        try await sink.write(AudioBuffer(samples: .float32(samples), channels: 2))
        try await sink.drain()
        let read = try await reading.value
        // The first write after a rest fades in over 5 ms.
        var expected = samples
        StreamConversion.fadeIn(&expected, channels: 2, frames: clip.frames(in: SnapcastSink.fadeIn))
        #expect(read.bytes == StreamConversion.bytes(expected, bits: 16), "every byte, in order")
        let limit = Self.bytesPerSecond / 10
        #expect(read.mostQueued <= limit, "at most 100 ms ahead: \(read.mostQueued) bytes against \(limit)")
        // It did run ahead: a pipe kept nearly empty would let snapserver run dry.
        #expect(read.mostQueued >= Self.bytesPerSecond * 6 / 100, "\(read.mostQueued) bytes")
        await sink.close()
    }
}
