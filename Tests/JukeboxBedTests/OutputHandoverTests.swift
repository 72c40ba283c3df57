import JukeboxAudio
import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxTestSupport
import Logging
import Synchronization
import Testing
@testable import JukeboxBed

/// The player and the bed's mixer over a card that, like an `hw:` device, can be open once:
/// a second open while it is held fails with "device busy". A new output (a reload that
/// changes the bed) takes the card only after the old one let it go, and a card the mixer
/// cannot open is the player's device state, as `status`, `health` and `/metrics` read it.
@Suite("Music bed: one owner of the device", .timeLimit(.minutes(1)))
struct OutputHandoverTests {
    /// A card that can be open once, and keeps count of who opened it when.
    final class ExclusiveCard: Sendable {
        struct Counts: Sendable {
            var open = 0
            var most = 0
            var opens = 0
            var refused = 0
            /// Another program has it.
            var taken = false
        }
        let counts = Mutex(Counts())
        var now: Counts { counts.withLock { $0 } }
        func take(_ taken: Bool) { counts.withLock { $0.taken = taken } }
        func pcm() -> PCM { PCM(card: self) }

        /// One open of the card. Writes return at once: the mixer holds itself to real time.
        final class PCM: AudioSink {
            let card: ExclusiveCard
            let held = Mutex(false)
            init(card: ExclusiveCard) { self.card = card }
            var deviceName: String { "hw:Exclusive" }
            var underruns: Int { 0 }
            func open(_ format: AudioFormat) async throws -> AudioFormat {
                try card.counts.withLock { counts throws(AudioDeviceError) in
                    if counts.open > 0 || counts.taken {
                        counts.refused += 1
                        throw AudioDeviceError(code: .busy, device: deviceName, operation: "open", reason: "Device or resource busy")
                    }
                    counts.open += 1
                    counts.opens += 1
                    counts.most = max(counts.most, counts.open)
                }
                held.withLock { $0 = true }
                return format
            }
            func write(_ buffer: AudioBuffer) async throws {}
            func interrupt() {}
            func drain() async throws {}
            func cancel() async -> Int { 0 }
            func rewind(upTo maxFrames: Int, keeping: Int) async -> Int { 0 }
            func close() async {
                let was = held.withLock { held in
                    defer { held = false }
                    return held
                }
                if was { card.counts.withLock { $0.open -= 1 } }
            }
        }
    }

    let folder: TemporaryDirectory
    let card = ExclusiveCard()

    init() throws { folder = try TemporaryDirectory() }

    /// A bed on the card at `level`, reading the one pipe every bed here reads, keeping time
    /// by `clock`.
    func bed(level: Double, clock: ElapsedClock = ElapsedClock(ContinuousClock())) -> MixingSink {
        MixingSink(
            device: card.pcm(),
            settings: .init(pipe: folder.file("bed"), format: StreamFormat(sampleRate: 8_000, bits: 16, channels: 1), level: level),
            outputLatency: .zero, makeRateConverter: nil, clock: clock, logger: Logger(label: "test"))
    }

    /// Waits (checking every 5 ms, for at most 10 s) until `condition` holds.
    func until(_ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return await condition()
    }

    @Test func aBedChangedWhileAClipPlaysTakesTheCardOnlyOnceTheOldOneLetItGo() async throws {
        let (first, second) = (bed(level: 0.5), bed(level: 0.25))
        // A second and a half of clip at 8 kHz: long enough for the reload to land mid-clip.
        let decoder = FakeDecoder(clips: ["/clips/c.wav": .init(tag: 1000, frames: 12_000, format: AudioFormat(sampleFormat: .s16, sampleRate: 8_000, channels: 1))])
        let player = Player(output: AudioOutput(bed: first), decoder: decoder, logger: Logger(label: "test"))
        // Made, neither bed has opened anything: the player has not taken the output up.
        #expect(card.now.opens == 0)
        await player.start()
        #expect(await until { card.now.opens == 1 && first.deviceState == .open })
        let playing = Task { try await player.play(Fixtures.clip("c")) }
        #expect(await until { await (player.position?.elapsed ?? .zero) >= .milliseconds(300) })
        await player.useOutput(AudioOutput(bed: second))
        // The new bed waits for the clip: the old one still holds the card.
        #expect(second.deviceState == .opening)
        #expect(card.now.opens == 1)
        let played = try await playing.value
        if case .completed = played.outcome {} else { Issue.record("the clip played to its end: \(played)") }
        await player.becameIdle()
        #expect(await until { card.now.opens == 2 && second.deviceState == .open })
        #expect(first.deviceState == .closed)
        let counts = card.now
        #expect(counts.most == 1, "never two opens of the card at once")
        #expect(counts.refused == 0, "no open was refused as busy")
        #expect(await player.device == .closed)
        await player.shutdown()
        #expect(card.now.open == 0)
    }

    /// The mixer keeps the daemon's time: its retries wait on the clock it is given, here one
    /// the test moves.
    @Test func aCardTheMixerCannotOpenIsThePlayersDeviceState() async throws {
        card.take(true)
        let clock = ManualClock()
        let mixer = bed(level: 0.5, clock: ElapsedClock(clock))
        let player = Player(output: AudioOutput(bed: mixer), decoder: FakeDecoder(clips: [:]), logger: Logger(label: "test"))
        await player.start()
        #expect(await until {
            if case .retrying(_, let error) = await player.device { error.code == .busy && error.device == "hw:Exclusive" } else { false }
        })
        // Tried again every 2 s of the mixer's clock: a second failure counts as missing for that long.
        await clock.waitForSleepers()
        #expect(card.now.refused == 1, "no retry before its time")
        clock.advance(by: MixingSink.retryEvery)
        #expect(await until { card.now.refused == 2 })
        #expect(await until { await player.missingFor >= MixingSink.retryEvery })
        card.take(false)
        await clock.waitForSleepers()
        clock.advance(by: MixingSink.retryEvery)
        #expect(await until { mixer.deviceState == .open })
        #expect(await until { await player.device == .closed })
        #expect(await player.missingFor == .zero)
        await player.shutdown()
        #expect(card.now.open == 0)
    }

    @Test func aBedRetiredBeforeItStartedNeverOpensTheCard() async throws {
        let mixer = bed(level: 0.5)
        await mixer.retire()
        mixer.start(musicOn: true, level: 100) {}
        #expect(mixer.deviceState == .closed)
        await #expect(throws: AudioDeviceError.self) {
            _ = try await mixer.open(AudioFormat(sampleFormat: .float32, sampleRate: 8_000, channels: 1))
        }
        #expect(card.now.opens == 0)
    }
}
