#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JukeboxFiles

/// What `jukebox test` found: the device the tone went to, the format it was opened for (and
/// the device's own, when it converts), and whether it took the audio as fast as it plays.
public struct SoundTest: Sendable, Equatable {
    public var device: String
    public var format: AudioFormat
    public var deviceFormat: AudioFormat?
    /// The tone's length, and how long the device took to play it out.
    public var seconds: Double
    public var took: Double

    /// A sound card takes a second of audio in about a second (plus its buffer); a device
    /// that takes it in a fraction of that (`null`, a file) plays nothing anyone hears.
    public var realTime: Bool { took >= seconds * 0.8 }
}

extension Jukebox {
    /// How long a test waits for its tone to be played.
    static let soundTestLimit: Duration = .seconds(30)

    /// Plays `TestTone` through `device` (an ALSA PCM name), or the session's output. The
    /// session's own device gets it through the queue, cutting in as an urgent clip would,
    /// so it never sounds over a clip; another device is opened for it alone, as the service
    /// would open it, and closed after. A device that cannot be opened or played is the
    /// error, in its own words (`JukeboxError.soundTestFailed`).
    public func soundTest(device: String?) async throws(JukeboxError) -> SoundTest {
        // One at a time: a device that does not answer keeps the slot until it does, so tests
        // of a hung device never pile up threads and descriptors.
        guard !soundTestRunning else { throw .soundTestBusy }
        let own = catalog.session.output
        if let device, own != .alsa(device: device) {
            guard !device.isEmpty, device.utf8.count <= ClientDeviceName.maxLength, !device.contains(where: \.isNewline) else {
                throw .invalidParameter("\"device\" must be an ALSA device name such as plughw:CARD=Device,DEV=0 (`aplay -L` lists them)")
            }
            soundTestRunning = true
            // A name from a client is ALSA configuration, which can write files and run
            // programs: it is opened only once vetted (`ClientDeviceName`).
            guard let vet = configuration.vetClientDevice else {
                soundTestRunning = false
                throw .deviceRefused(device: device, reason: "only the session's own device can be tested here")
            }
            if let reason = await vet(device) {
                soundTestRunning = false
                throw .deviceRefused(device: device, reason: reason)
            }
            return try await soundTestOpening(.alsa(device: device))
        }
        soundTestRunning = true
        defer { soundTestRunning = false }
        return try await soundTestThroughTheQueue()
    }

    /// The tone on a device of its own, opened, played, drained and closed, in a task of its
    /// own: the answer comes by `soundTestLimit` (or at a stop) even when the device never
    /// answers, and the slot is given back when it does.
    private func soundTestOpening(_ output: OutputConfig) async throws(JukeboxError) -> SoundTest {
        let sink = ConvertingSink(makeOutput(output, nil).sink, makeRateConverter: configuration.makeRateConverter)
        let clock = ElapsedClock(configuration.time.clock)
        let deadline = clock.now + Self.soundTestLimit
        let outcome = await AbandonableCall.run {
            try await clock.sleep(until: deadline)
        } work: { [self] in
            let played = await Self.playTestTone(on: sink, output: output, clock: clock)
            await self.soundTestEnded()
            return played
        }
        let played: (failure: AudioDeviceError?, took: Double, deviceFormat: AudioFormat?)
        switch outcome {
        case .finished(let result):
            played = result
        case .timedOut:
            throw .soundTestFailed(AudioDeviceError(
                code: .stalled, device: output.description, operation: "play the test tone",
                reason: "it did not answer within \(DurationText.format(Self.soundTestLimit))",
                hint: "it may be waiting for something that never comes (a FIFO nobody reads, a stuck driver); another test can run once it answers"))
        case .stopping:
            throw .stopping
        case .cancelled:
            throw .soundTestFailed(AudioDeviceError(code: .stalled, device: output.description, operation: "play the test tone", reason: "the request was withdrawn"))
        }
        var failure = played.failure
        // A name that is not there: the one meant and the devices there are, as --check says.
        if var problem = failure, problem.code == .notFound, case .alsa(let name) = output, let checkDevice = configuration.checkDevice {
            let found = await checkDevice(name)
            if found.problem?.code == .notFound {
                problem.hint = DeviceCheck.hint(for: name, known: found.known)
                failure = problem
            }
        }
        if let failure { throw .soundTestFailed(failure) }
        return SoundTest(device: output.description, format: TestTone.format, deviceFormat: played.deviceFormat, seconds: TestTone.seconds, took: played.took)
    }

    private func soundTestEnded() {
        soundTestRunning = false
    }

    /// Opens `sink`, plays the tone, drains and closes it: what failed, how long it took,
    /// and the device's own format when it is not the tone's.
    private static func playTestTone(
        on sink: ConvertingSink, output: OutputConfig, clock: ElapsedClock
    ) async -> (failure: AudioDeviceError?, took: Double, deviceFormat: AudioFormat?) {
        let format = TestTone.format
        let started = clock.now
        var failure: AudioDeviceError?
        do {
            _ = try await sink.open(format)
            let samples = TestTone.samples
            let block = format.sampleRate / 10 * format.channels
            for start in stride(from: 0, to: samples.count, by: block) {
                try await sink.write(AudioBuffer(samples: .s16(Array(samples[start..<min(start + block, samples.count)])), channels: format.channels))
            }
            try await sink.drain()
        } catch {
            failure = error as? AudioDeviceError ?? AudioDeviceError(code: .ioError, device: output.description, operation: "play", reason: "\(error)")
        }
        let took = (clock.now - started).secondsDouble
        let deviceFormat = sink.deviceFormat.flatMap { $0 == format ? nil : $0 }
        await sink.close()
        await sink.retire()
        return (failure, took, deviceFormat)
    }

    /// The tone as an urgent entry of the client `test`: it waits for nothing but another
    /// urgent clip, and the clip it cuts goes on after it. A device that fails is told at its
    /// first failure, and the test entry is taken out of the queue.
    private func soundTestThroughTheQueue() async throws(JukeboxError) -> SoundTest {
        guard await !queue.isPaused else {
            throw .invalidParameter("jukeboxd is paused, so nothing plays through its device: resume it (jukebox resume), then test again")
        }
        let path = stateFile.map { FilePath.join(FilePath.directory(of: $0.path), "test-tone.wav") }
            ?? FilePath.join(getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp", "jukeboxd-test-tone.wav")
        // Replaced whole, through a new file renamed over it: never written through a link
        // someone left under its name (in /tmp, without a state folder).
        let written = await BlockingWorkQueue(label: "jukeboxd.test-tone").run { Result { try AtomicFile.write(TestTone.wav, to: path) } }
        if case .failure(let problem) = written {
            throw .soundTestFailed(AudioDeviceError(code: .ioError, device: catalog.session.output.description, operation: "prepare the test tone", reason: "\(problem)"))
        }
        let changes = events.watch()
        let clip = PlayableClip(id: "test", source: ClipSource(file: "test tone", path: path), title: "test tone")
        let ticket: UInt64
        do {
            ticket = try await queue.enqueue(clip, origin: .client(Requester(.soundTest, name: Self.soundTestClient)), urgent: true).entry.ticket
        } catch {
            throw .queueFull(error)
        }
        let clock = ElapsedClock(configuration.time.clock)
        let deadline = clock.now + Self.soundTestLimit
        let outputName = catalog.session.output.description
        let outcome: Result<Duration, AudioDeviceError>? = await withTaskGroup(of: Result<Duration, AudioDeviceError>?.self) { group in
            group.addTask {
                var started: Duration?
                for await event in changes {
                    switch event {
                    case .playing(let entry) where entry.ticket == ticket:
                        started = clock.now
                    case .finished(let play) where play.entry.ticket == ticket:
                        if case .completed = play.outcome { return .success(clock.now - (started ?? clock.now)) }
                        return .failure(AudioDeviceError(code: .ioError, device: outputName, operation: "play the test tone", reason: play.outcome.reason ?? play.outcome.name))
                    case .device(.retrying(_, let error)):
                        return .failure(error)
                    default:
                        break
                    }
                }
                return nil
            }
            group.addTask {
                try? await clock.sleep(until: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch outcome {
        case .success(let took)?:
            let opened = await player.lastOpened
            return SoundTest(
                device: opened?.device ?? catalog.session.output.description, format: opened?.format ?? TestTone.format, deviceFormat: opened?.deviceFormat,
                seconds: TestTone.seconds, took: took.secondsDouble)
        case .failure(let error)?:
            _ = await queue.stop(queuedBy: Self.soundTestClient)
            throw .soundTestFailed(error)
        case nil:
            _ = await queue.stop(queuedBy: Self.soundTestClient)
            throw .soundTestFailed(AudioDeviceError(
                code: .stalled, device: catalog.session.output.description, operation: "play the test tone",
                reason: "it did not play within \(DurationText.format(Self.soundTestLimit))", hint: "jukebox status says what the device is doing"))
        }
    }

    /// The client name test tones are queued under.
    public static let soundTestClient = "test"
}
