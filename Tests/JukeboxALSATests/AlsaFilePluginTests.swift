import Glibc
import JukeboxALSA
import JukeboxCore
import JukeboxSndFile
import JukeboxTestSupport
import Logging
import Synchronization
import Testing

/// Real ALSA, no sound card: the `file` PCM plugin writes everything it is sent to a file
/// (with the `null` PCM behind it), so the bytes that reached ALSA can be compared with the
/// clip's PCM. The plugin truncates its file on every open.
@Suite("ALSA through the file plugin", .timeLimit(.minutes(1)))
struct AlsaFilePluginTests {
    let folder: TemporaryDirectory
    init() throws { folder = try TemporaryDirectory() }

    var device: String { "file:FILE=\(folder.file("out.raw")),FORMAT=raw" }

    func player(_ device: String? = nil) -> Player {
        Player(sink: AlsaSink(device: device ?? self.device), decoder: SndFileDecoder(), logger: .quiet)
    }

    func clip(_ name: String, _ samples: [Double], encoding: WAVFile.Encoding = .s16, rate: Int = 44_100, channels: Int = 2) throws -> PlayableClip {
        let path = try folder.write(name, WAVFile.bytes(samples, encoding: encoding, rate: rate, channels: channels))
        return PlayableClip(id: name, source: ClipSource(file: name, path: path))
    }

    @Test func bytesReachingALSAEqualTheClipsPCM() async throws {
        let samples = WAVFile.tone(frequency: 440, frames: 44_100, rate: 44_100, channels: 2)
        let player = player()
        #expect(try await player.play(clip("a.wav", samples)) == .ended(.completed(duration: .seconds(1))))
        await player.shutdown()
        #expect(try folder.read("out.raw") == WAVFile.pcm16(samples))
    }

    @Test func sameFormatClipsAreWrittenBackToBackWithNothingBetween() async throws {
        let a = WAVFile.tone(frequency: 440, frames: 30_000, rate: 44_100, channels: 2)
        let b = WAVFile.tone(frequency: 660, frames: 17_000, rate: 44_100, channels: 2)
        let player = player()
        _ = try await player.play(clip("a.wav", a))
        _ = try await player.play(clip("b.wav", b))
        await player.becameIdle()
        await player.shutdown()
        #expect(try folder.read("out.raw") == WAVFile.pcm16(a + b))
    }

    @Test func twelveKilohertzMonoEightBitArrivesAsSixteenBit() async throws {
        let samples = WAVFile.tone(frequency: 300, frames: 6000, rate: 12_000, channels: 1)
        let player = player()
        _ = try await player.play(clip("low.wav", samples, encoding: .u8, rate: 12_000, channels: 1))
        await player.shutdown()
        let expected = samples.flatMap { sample -> [UInt8] in
            let value = Int16((min(max(sample, -1), 1) * 127).rounded()) << 8
            return [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
        }
        #expect(try folder.read("out.raw") == expected)
    }

    @Test func floatClipArrivesAsFloat() async throws {
        let samples = WAVFile.tone(frequency: 500, frames: 4800, rate: 48_000, channels: 1)
        let player = player()
        _ = try await player.play(clip("f.wav", samples, encoding: .float32, rate: 48_000, channels: 1))
        await player.shutdown()
        let expected = samples.flatMap { sample -> [UInt8] in
            let bits = Float(sample).bitPattern
            return (0..<4).map { UInt8(truncatingIfNeeded: bits >> (8 * $0)) }
        }
        #expect(try folder.read("out.raw") == expected)
    }

    @Test func gainIsAppliedWithoutWrapAround() async throws {
        let samples: [Double] = [0.9, -0.9, 0.1, -0.1]
        var loud = try clip("loud.wav", samples, channels: 1)
        loud.gainDecibels = 6
        let player = player()
        _ = try await player.play(loud)
        await player.shutdown()
        let out = try folder.read("out.raw")
        let values = stride(from: 0, to: out.count, by: 2).map { Int16(bitPattern: UInt16(out[$0]) | UInt16(out[$0 + 1]) << 8) }
        #expect(values[0] == 32_767)
        #expect(values[1] == -32_768)
        #expect(abs(Int(values[2]) - 6_538) <= 1)
    }

    @Test func unknownDeviceErrorNamesDeviceReasonAndHint() async throws {
        let sink = AlsaSink(device: "jukebox_no_such_pcm")
        do {
            _ = try await sink.open(AudioFormat(sampleFormat: .s16, sampleRate: 44_100, channels: 2))
            Issue.record("opened a PCM that does not exist")
        } catch let error as AudioDeviceError {
            #expect(error.code == .notFound)
            #expect(error.device == "jukebox_no_such_pcm")
            #expect(error.reason == "No such file or directory")
            #expect(error.description == #"audio device "jukebox_no_such_pcm": cannot open: No such file or directory (check the name with `aplay -L`; a USB device may not be plugged in yet)"#)
        }
    }

    @Test func libasoundMessagesReachTheLogger() async throws {
        let collected = LogCollector()
        var logger = Logger(label: "alsa-test") { _ in collected }
        logger.logLevel = .debug
        AlsaSink.routeLibraryMessages(to: logger)
        _ = try? await AlsaSink(device: "jukebox_missing_pcm").open(AudioFormat(sampleFormat: .s16, sampleRate: 8000, channels: 1))
        #expect(collected.messages.contains { $0.contains("alsa-lib") && $0.contains("jukebox_missing_pcm") }, "\(collected.messages)")
    }
}

/// Keeps log messages for assertions.
struct LogCollector: LogHandler {
    private let storage = Storage()
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    final class Storage: Sendable {
        let lines = Mutex<[String]>([])
    }

    var messages: [String] { storage.lines.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        storage.lines.withLock { $0.append("\(event.message)") }
    }
}

extension AlsaFilePluginTests {
    /// A clip file cut short while it plays used to be recorded as `completed`; it ends early,
    /// and the reason says how much of it was played.
    @Test func clipTruncatedWhileItPlaysEndsEarly() async throws {
        let samples = WAVFile.tone(frequency: 440, frames: 32_000, rate: 8000, channels: 1)
        let played = try clip("long.wav", samples, rate: 8000, channels: 1)
        let held = HeldSink(AlsaSink(device: device, blockDuration: .milliseconds(250)), holdAt: 1)
        let player = Player(sink: held, decoder: SndFileDecoder(), logger: .quiet)
        let playing = Task { try await player.play(played) }
        await held.waitUntilHeld()
        // Two 250 ms blocks and the decoder's second ahead are read by now (1.25 s); keep 2 s in the file.
        #expect(truncate(played.source.path, 44 + 16_000 * 2) == 0)
        await held.release()
        let outcome = try #require(try await playing.value.outcome)
        await player.shutdown()
        #expect(outcome == .endedEarly(reason: "the file holds less audio than its header says (cut short while it played, or damaged): played 2s of 4s"))
        #expect(outcome.name == "ended-early")
    }

    /// A FIFO or a device named as a clip is "not a regular file", not "no such file", and
    /// opening it does not wait for a writer.
    @Test func aFIFOIsNotAClip() async throws {
        let path = folder.file("pipe.wav")
        #expect(mkfifo(path, 0o600) == 0)
        await #expect(throws: ClipDecodeError(file: "pipe.wav", reason: "not a regular file (a FIFO, socket or device cannot be a clip)")) {
            _ = try await SndFileDecoder().open(ClipSource(file: "pipe.wav", path: path))
        }
        await #expect(throws: ClipDecodeError(file: "zero", reason: "not a regular file (a FIFO, socket or device cannot be a clip)")) {
            _ = try await SndFileDecoder().open(ClipSource(file: "zero", path: "/dev/zero"))
        }
    }
}
