#if canImport(Glibc)
import Glibc
#endif
import JukeboxAudio
import Logging
import Synchronization

/// The output with a music bed (the session's `bed`): it holds the device open at the bed's
/// format and writes to it without a break, music from the bed's pipe with the clips mixed
/// over it. The music's gain is a thing the duck policy lowers while a clip sounds, as it
/// lowers MPD (`setDuckLevel`, a step at a time; the mixer glides between steps, so no step
/// is heard). The sum is limited so it never clips (`MixLimiter`).
///
/// To the player it is an output like any other: it sits below the conversion stage, which
/// brings every clip to the mix's rate and channels in float samples. What the player writes
/// waits in a short ring until the mixer takes it, so a cut or a volume change takes back
/// what is still there (`rewind`), as on an ALSA device. Clips still come one at a time from
/// the one player; only the music is added.
///
/// The mixer is a task of its own that writes a block at a time to the device, which paces
/// it; the device's blocking calls stay on the device's own thread, and the pipe is read on
/// the pipe's (`BedPipe`). A bed that stops writing is silence here, never a wait.
///
/// Making one opens nothing: the mixer starts when the player takes the output up (`start`)
/// and closes the device when it is retired, so the device has one owner at a time.
///
/// While nothing sounds (no music coming in, no clip) for `restAfter`, the mixer rests: the
/// device is held still (`AudioSink.hold`), open and with its buffer of silence, and nothing
/// wakes until music or a clip comes; then it plays on, and paces the mixer as before. A device
/// that cannot be held is written to without a break.
public final class MixingSink: AudioSink, MusicBed, Sendable {
    public let device: any AudioSink
    public let settings: Settings
    private let makeRateConverter: RateConverterFactory?
    private let logger: Logger
    private let state: Mutex<State>
    /// What the mixer keeps time by, as the rest of the daemon does (`TimeSource`): its
    /// waits for a failed device and for a device that takes audio faster than it plays.
    private let clock: ElapsedClock

    /// What the session's `bed` section says, in the audio layer's terms.
    public struct Settings: Sendable, Equatable {
        public var pipe: String
        public var format: StreamFormat
        /// What is left of the music under a clip, as a fraction: the ducked level that the
        /// duck policy's last step names, exactly.
        public var level: Double
        /// The group the FIFO is given to (mode 0660); nil: left as made.
        public var group: gid_t?

        public init(pipe: String, format: StreamFormat, level: Double, group: gid_t? = nil) {
            self.group = group
            self.pipe = pipe
            self.format = format
            self.level = level
        }
    }

    /// How much the mixer writes to the device at a time. The device holds `outputLatency`
    /// ahead; a clip is mixed in at most this plus what the ring holds after it is written.
    /// Music must be in hand a block ahead (`BedPipe.prefill`), so a shorter block lets it be
    /// picked up sooner, at the cost of more wake-ups: the mixer's task, the device's thread
    /// and the sound server's each wake once a block (25 ms blocks cost half as much again
    /// as 50 ms on the paced rig).
    public static let mixBlock: Duration = .milliseconds(50)
    /// The most of a clip the ring holds ahead of the mixer (two of the player's blocks and a
    /// mixer block): as far back as a cut or a volume change can take.
    static let ringHolds: Duration = .milliseconds(250)
    /// How fast `bed off` and `bed on` fade the music: 90 dB in 200 ms.
    static let muteDecibelsPerSecond = 450.0
    /// How long the music glides to a level the duck policy sets: a step of its ramps.
    static let duckGlide: Duration = .milliseconds(50)
    /// The floor of the music's level in dB: below it, silence.
    static let silentDecibels = -90.0
    /// How often a device that failed is tried again.
    static let retryEvery: Duration = .seconds(2)
    /// How long the mix is silence before the mixer rests.
    static let restAfter: Duration = .seconds(2)

    private struct State: ~Copyable {
        enum Phase { case starting, running(mix: AudioFormat, device: AudioFormat), failed(AudioDeviceError), retired }
        var phase: Phase = .starting
        /// The mixer's task, from `start` on.
        var pump: Task<Void, Never>?
        /// Failures in a row since the device was last open.
        var failures = 0
        /// Told each time the device's state changes.
        var deviceChanged: (@Sendable () -> Void)?
        var pipe: BedPipe?
        var clip: FrameRing?
        var on = true
        /// The music's level now, in dB; the level the duck policy set last, and how fast the
        /// music glides to it, in dB a second.
        var decibels = 0.0
        var ducked = 0.0
        var glide = Double.infinity
        /// The player has the output open for a clip, and has not said nothing follows.
        var clipOpen = false
        var interrupted = false
        /// A write waiting for room in the ring, with how much it still has to put there.
        var writer: CheckedContinuation<Void, any Error>?
        var drainers: [CheckedContinuation<Void, any Error>] = []
        var openers: [CheckedContinuation<Void, Never>] = []
        /// Device frames written, and by when the last clip frame mixed has been heard.
        var written = 0
        var clipHeardBy = 0
        /// The last block mixed had clip frames in it: a clip is sounding.
        var clipSounding = false
        /// The mixer at rest, waiting for music or a clip; and whether one came since it last
        /// looked.
        var resting: CheckedContinuation<Void, Never>?
        var woken = false

        /// Something to play came: a resting mixer starts again.
        mutating func wake() {
            woken = true
            if let resting {
                self.resting = nil
                resting.resume()
            }
        }
    }

    /// `device`: the output the mix plays through (an ALSA device, a Snapcast pipe), which
    /// holds `outputLatency` ahead of what is heard.
    public init(
        device: any AudioSink, settings: Settings, outputLatency: Duration, makeRateConverter: RateConverterFactory?,
        clock: ElapsedClock = ElapsedClock(ContinuousClock()), logger: Logger
    ) {
        self.clock = clock
        self.device = device
        self.settings = settings
        self.makeRateConverter = makeRateConverter
        self.logger = logger
        self.outputLatency = outputLatency
        state = Mutex(State())
    }

    public func start(musicOn: Bool, level: Int, deviceChanged: @escaping @Sendable () -> Void) {
        let ducked = decibels(ducked: level)
        state.withLock { state in
            // Started once; and one retired before it started never starts.
            if case .retired = state.phase { return }
            guard state.pump == nil else { return }
            state.on = musicOn
            // Off (or lowered) from the start: at that level from the first block, not faded.
            state.ducked = ducked
            state.decibels = musicOn ? ducked : Self.silentDecibels
            state.deviceChanged = deviceChanged
            state.pump = Task { [self] in await self.run() }
        }
    }

    public var deviceState: MixerDeviceState {
        state.withLock { state in
            switch state.phase {
            case .starting: .opening
            case .running: .open
            case .failed(let error): .failed(error, retryIn: Self.retryEvery, missingFor: Self.retryEvery * max(state.failures - 1, 0))
            case .retired: .closed
            }
        }
    }

    private func tellDeviceChanged() {
        state.withLock { $0.deviceChanged }?()
    }

    public let outputLatency: Duration
    public var deviceName: String { device.deviceName }
    public var underruns: Int { device.underruns }
    public var canDiscard: Bool { true }
    public var blockDuration: Duration { .milliseconds(100) }

    // MARK: - The player's side

    public func open(_ requested: AudioFormat) async throws -> AudioFormat {
        await withCheckedContinuation { waiting in
            let ready = state.withLock { state -> Bool in
                guard case .starting = state.phase, state.pump != nil else { return true }
                state.openers.append(waiting)
                return false
            }
            if ready { waiting.resume() }
        }
        return try state.withLock { state throws(AudioDeviceError) -> AudioFormat in
            switch state.phase {
            case .running(let mix, _):
                state.clipOpen = true
                state.wake()
                return mix
            case .failed(let error): throw error
            case .starting:
                throw AudioDeviceError(code: .ioError, device: deviceName, operation: "open", reason: "the music bed's mixer has not been started")
            case .retired:
                throw AudioDeviceError(code: .ioError, device: deviceName, operation: "open", reason: "the output is shutting down")
            }
        }
    }

    public func write(_ buffer: AudioBuffer) async throws {
        let samples = SampleMath.floats(buffer)
        var offset = 0
        while true {
            let outcome = try state.withLock { state throws(AudioDeviceError) -> Bool in
                if case .failed(let error) = state.phase { throw error }
                guard state.clip != nil else { throw AudioDeviceError(code: .ioError, device: deviceName, operation: "write", reason: "the output is not open") }
                offset += state.clip!.append(samples[offset...]) * buffer.channels
                state.wake()
                return offset >= samples.count
            }
            if outcome { return }
            try await withCheckedThrowingContinuation { (waiting: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> (any Error)?? in
                    if state.interrupted {
                        state.interrupted = false
                        return .some(WriteInterrupted(framesWritten: offset / max(buffer.channels, 1)))
                    }
                    if case .failed(let error) = state.phase { return .some(error) }
                    if state.clip.map({ $0.room > 0 }) ?? true { return .some(nil) }
                    state.writer = waiting
                    return nil
                }
                switch resumeNow {
                case .some(.some(let error)): waiting.resume(throwing: error)
                case .some(.none): waiting.resume()
                case .none: break
                }
            }
        }
    }

    public func interrupt() {
        let writer = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.interrupted = true
            defer { state.writer = nil }
            return state.writer
        }
        if let writer {
            // The write sees the flag when it looks again.
            writer.resume()
        }
    }

    /// Waits until the mixer has taken every frame written, and the device has played it.
    public func drain() async throws {
        try await withCheckedThrowingContinuation { (waiting: CheckedContinuation<Void, any Error>) in
            let now = state.withLock { state -> Result<Bool, AudioDeviceError> in
                if case .failed(let error) = state.phase { return .failure(error) }
                if (state.clip?.frames ?? 0) == 0, state.written >= state.clipHeardBy { return .success(true) }
                guard case .running = state.phase else { return .success(true) }
                state.drainers.append(waiting)
                return .success(false)
            }
            switch now {
            case .success(true): waiting.resume()
            case .success(false): break
            case .failure(let error): waiting.resume(throwing: error)
            }
        }
    }

    public func cancel() async -> Int {
        state.withLock { state in
            state.interrupted = false
            return state.clip?.removeAll() ?? 0
        }
    }

    public func rewind(upTo maxFrames: Int, keeping: Int) async -> Int {
        state.withLock { state in
            state.interrupted = false
            guard case .running(let mix, _) = state.phase, state.clip != nil else { return 0 }
            // At least a mixer block stays, so the mixer cannot take the ring empty before what
            // replaces the rest (a fade) is written, which would leave a gap in the clip.
            let keep = max(keeping, mix.frames(in: Self.mixBlock))
            return state.clip!.dropNewest(min(maxFrames, state.clip!.frames - keep))
        }
    }

    /// The clips are done with the output for now; the music plays on.
    public func close() async {
        state.withLock { state in
            state.clipOpen = false
        }
    }

    public func retire() async {
        let pump = state.withLock { state -> Task<Void, Never>? in
            if state.pump == nil { state.phase = .retired }
            return state.pump
        }
        guard let pump else {
            failWaiters(AudioDeviceError(code: .ioError, device: deviceName, operation: "write", reason: "the output was closed"))
            wakeOpeners()
            return
        }
        pump.cancel()
        // A device write waiting for room ends at once, and so does a rest; the mixer then
        // sees it is cancelled.
        device.interrupt()
        interrupt()
        wakeMixer()
        await pump.value
    }

    // MARK: - The music bed

    public var bedState: MusicBedState { bedState(now: .now) }

    /// The bed's state as it is at `now` (tests name the moment, so a loaded machine's delay
    /// between feeding music and looking cannot make it look stale).
    func bedState(now: ContinuousClock.Instant) -> MusicBedState {
        let (on, ducked, pipe) = state.withLock { state in
            (state.on, state.decibels < -0.5 && state.on, state.pipe)
        }
        let (playing, problem) = pipe?.state(now: now) ?? (false, nil)
        return MusicBedState(pipe: settings.pipe, on: on, music: playing ? .playing : .waiting, ducked: ducked, problem: problem)
    }

    /// Music frames read from the pipe and not yet mixed (for tests).
    var musicBuffered: Int { state.withLock { $0.pipe }?.buffered ?? 0 }
    var partialFramesDropped: Int { state.withLock { $0.pipe }?.partialFramesDropped ?? 0 }

    public func setMusicOn(_ on: Bool) {
        state.withLock { state in
            state.on = on
            state.glide = Self.muteDecibelsPerSecond
            state.wake()
        }
    }

    public func setDuckLevel(_ percent: Int) {
        let ducked = decibels(ducked: percent)
        state.withLock { state in
            guard ducked != state.ducked else { return }
            // There by the next step: the steps join into one unbroken fade.
            state.glide = max(abs(ducked - state.decibels) / Self.duckGlide.secondsDouble, 1)
            state.ducked = ducked
        }
    }

    /// The music's level in dB at `percent` of its own: the bed's `level` exactly at or under
    /// the step the duck policy lowers it to (a whole percent, rounded), full at 100.
    private func decibels(ducked percent: Int) -> Double {
        guard percent < 100 else { return 0 }
        if percent <= Int((100 * settings.level).rounded()) { return levelDecibels }
        return max(20 * log10(Double(max(percent, 0)) / 100), Self.silentDecibels)
    }

    /// Ends the mixer's rest, if it rests (music came in, the output is retired).
    private func wakeMixer() {
        state.withLock { $0.wake() }
    }

    /// Rests until music or a clip comes, unless one came since `woken` was last cleared.
    private func rest() async {
        await withCheckedContinuation { (waiting: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard !state.woken, !Task.isCancelled else { return true }
                state.resting = waiting
                return false
            }
            if now { waiting.resume() }
        }
    }

    /// Whether nothing sounds: no music in this block, no clip in hand or to be heard, no
    /// drain waiting. Clears `woken` when so, so that what comes from here on ends a rest.
    private func quiet(music: Bool) -> Bool {
        guard !music else { return false }
        return state.withLock { state in
            let quiet = (state.clip?.frames ?? 0) == 0 && !state.clipOpen && state.written >= state.clipHeardBy && state.drainers.isEmpty
            if quiet { state.woken = false }
            return quiet
        }
    }

    // MARK: - The mixer

    private var levelDecibels: Double {
        settings.level <= 0 ? Self.silentDecibels : max(20 * log10(settings.level), Self.silentDecibels)
    }

    private func run() async {
        var limiter: MixLimiter?
        var reportedFailure = false
        var lastProblem: String?
        var dryOuts = 0
        // Since when the device has taken how many frames without once making the mixer wait:
        // one that takes them faster than they play (ALSA's null PCM, a file) is held to
        // real time, or the mixer would spin. A device that waits paces the mixer itself.
        var pace: (since: Duration, frames: Int)?
        // Frames of silence mixed in a row, and whether the device can be held still.
        var quietFrames = 0
        var canRest = true
        while !Task.isCancelled {
            let running = state.withLock { state -> (mix: AudioFormat, device: AudioFormat)? in
                if case .running(let mix, let device) = state.phase { return (mix, device) }
                return nil
            }
            guard let (mix, deviceFormat) = running else {
                let wanted = AudioFormat(sampleFormat: .float32, sampleRate: settings.format.sampleRate, channels: settings.format.channels)
                do {
                    let opened = try await device.open(wanted)
                    let mix = AudioFormat(sampleFormat: .float32, sampleRate: opened.sampleRate, channels: opened.channels)
                    let pipe = state.withLock { state -> BedPipe? in
                        state.phase = .running(mix: mix, device: opened)
                        state.failures = 0
                        if state.clip?.channels != mix.channels {
                            state.clip = FrameRing(capacityFrames: mix.frames(in: Self.ringHolds), channels: mix.channels)
                        }
                        guard state.pipe == nil else { return nil }
                        state.pipe = BedPipe(
                            path: settings.pipe, format: settings.format, group: settings.group, mix: mix, makeRateConverter: makeRateConverter,
                            musicReady: { [weak self] in self?.wakeMixer() })
                        return state.pipe
                    }
                    pipe?.start()
                    if limiter?.channels != mix.channels { limiter = MixLimiter(channels: mix.channels, sampleRate: mix.sampleRate) }
                    if reportedFailure {
                        logger.notice("audio device \"\(deviceName)\" is working again; the music bed plays", metadata: ["device": "\(deviceName)"])
                        reportedFailure = false
                    }
                    wakeOpeners()
                    tellDeviceChanged()
                    pace = nil
                    quietFrames = 0
                } catch {
                    let failure = error as? AudioDeviceError
                        ?? AudioDeviceError(code: .ioError, device: deviceName, operation: "open", reason: "\(error)")
                    fail(failure)
                    if !reportedFailure {
                        logger.warning("\(failure); the music bed and the clips wait, and it is tried again every \(Self.retryEvery.milliseconds / 1000) s", metadata: ["device": "\(deviceName)"])
                        reportedFailure = true
                    }
                    try? await clock.sleep(until: clock.now + Self.retryEvery)
                }
                continue
            }
            let frames = mix.frames(in: Self.mixBlock)
            var block = [Float](repeating: 0, count: frames * mix.channels)
            let (from, to, pipe) = envelope(mix: mix, frames: frames)
            let music = pipe?.add(frames, into: &block, from: from, to: to) ?? false
            mixClip(into: &block, frames: frames, musicAt: music ? from : nil)
            if quiet(music: music) {
                quietFrames += frames
                if canRest, quietFrames >= mix.frames(in: Self.restAfter), !(pipe?.hasMusic ?? false) {
                    // What the device holds is silence: it is held still, keeping it, until
                    // music or a clip comes, and then plays on from there, paced as before.
                    if await device.hold(true) {
                        await rest()
                        _ = await device.hold(false)
                        quietFrames = 0
                        pace = nil
                        continue
                    }
                    // A device that cannot be held is written to without a break, as ever.
                    canRest = false
                }
            } else {
                quietFrames = 0
            }
            limiter?.apply(&block)
            if let pipe, pipe.dryOuts != dryOuts {
                dryOuts = pipe.dryOuts
                logger.debug("music bed: the music ran out mid-block (\(dryOuts) times so far): its writer stopped, or is late", metadata: ["pipe": "\(settings.pipe)"])
            }
            let problem = pipe?.state().problem
            if problem != lastProblem {
                if let problem { logger.warning("music bed: \(problem)", metadata: ["pipe": "\(settings.pipe)"]) }
                else if lastProblem != nil { logger.notice("music bed: reading \(settings.pipe) again", metadata: ["pipe": "\(settings.pipe)"]) }
                lastProblem = problem
            }
            do {
                let started = clock.now
                try await device.write(SampleMath.convert(AudioBuffer(samples: .float32(block), channels: mix.channels), to: deviceFormat.sampleFormat))
                wrote(frames, latency: mix.frames(in: outputLatency))
                pace = await held(to: pace, started: started, frames: frames, mix: mix)
            } catch is WriteInterrupted {
                continue
            } catch {
                if Task.isCancelled { break }
                let failure = error as? AudioDeviceError
                    ?? AudioDeviceError(code: .ioError, device: deviceName, operation: "write", reason: "\(error)")
                await device.close()
                fail(failure)
                logger.warning("\(failure); the music bed and the clips wait, and it is tried again every \(Self.retryEvery.milliseconds / 1000) s", metadata: ["device": "\(deviceName)"])
                reportedFailure = true
                try? await clock.sleep(until: clock.now + Self.retryEvery)
            }
        }
        let pipe = state.withLock { state -> BedPipe? in
            state.phase = .retired
            defer { state.pipe = nil }
            return state.pipe
        }
        failWaiters(AudioDeviceError(code: .ioError, device: deviceName, operation: "write", reason: "the output was closed"))
        wakeOpeners()
        tellDeviceChanged()
        // The reader is waited for off the cooperative pool: it may be in a poll of its own.
        if let pipe { await BlockingWorkQueue(label: "jukebox.bed.stop").run { pipe.stop() } }
        await device.cancel()
        await device.close()
    }

    /// After a write of `frames` that began at `started`: waits if the device has taken more
    /// than real time allows since it last made the mixer wait, and returns the new count.
    private func held(
        to pace: (since: Duration, frames: Int)?, started: Duration, frames: Int, mix: AudioFormat
    ) async -> (since: Duration, frames: Int)? {
        let now = clock.now
        if now - started >= Self.mixBlock / 2 { return nil }
        let since = pace?.since ?? started
        let total = (pace?.frames ?? 0) + frames
        let played: Duration = mix.duration(frames: total)
        let slack: Duration = outputLatency + Self.mixBlock * 2
        let ahead: Duration = played - (now - since) - slack
        if ahead > .zero { try? await clock.sleep(until: now + ahead) }
        return (since, total)
    }

    /// The music's gain over the next block (from, to, as fractions): toward the level the
    /// duck policy set, or toward silence while the music is off.
    private func envelope(mix: AudioFormat, frames: Int) -> (Float, Float, BedPipe?) {
        state.withLock { state in
            let target = state.on ? state.ducked : Self.silentDecibels
            let seconds = Double(frames) / Double(max(mix.sampleRate, 1))
            let before = state.decibels
            // Off: the switch's own fade (and on, until a step of the duck policy comes).
            var rate = state.on ? state.glide : Self.muteDecibelsPerSecond
            if rate <= 0 { rate = .infinity }
            let step = rate * seconds
            let after = target < before ? max(target, before - step) : min(target, before + step)
            state.decibels = after
            func gain(_ decibels: Double) -> Float { decibels <= Self.silentDecibels + 0.01 ? 0 : Float(pow(10, decibels / 20)) }
            return (gain(before), gain(after), state.pipe)
        }
    }

    /// Mixes the next of the clip into `block`. A clip that is about to start waits while the
    /// music in this block (`musicAt`, its gain at the block's start) is still gliding down to
    /// the level the duck policy set: the clip is never heard over music on its way down. The
    /// glide takes one step of the policy's ramp, so the wait is a block at most.
    private func mixClip(into block: inout [Float], frames: Int, musicAt gain: Float?) {
        let writer = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if !state.clipSounding, let gain, state.on, (state.clip?.frames ?? 0) > 0,
               Double(gain) > pow(10, (state.ducked + 0.05) / 20) {
                return nil
            }
            let taken = state.clip?.take(frames, addingInto: &block) ?? 0
            state.clipSounding = taken > 0
            guard taken > 0 else { return nil }
            state.clipHeardBy = .max
            defer { state.writer = nil }
            return state.writer
        }
        writer?.resume()
    }

    /// `frames` went to the device: a drain waiting for the last clip frame to be heard may end.
    private func wrote(_ frames: Int, latency: Int) {
        let done = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.written += frames
            if state.clipHeardBy == .max { state.clipHeardBy = state.written + latency }
            guard (state.clip?.frames ?? 0) == 0, state.written >= state.clipHeardBy else { return [] }
            defer { state.drainers = [] }
            return state.drainers
        }
        for drainer in done { drainer.resume() }
    }

    private func fail(_ error: AudioDeviceError) {
        state.withLock { state in
            state.phase = .failed(error)
            state.failures += 1
        }
        failWaiters(error)
        wakeOpeners()
        tellDeviceChanged()
    }

    private func failWaiters(_ error: any Error) {
        let (writer, drainers) = state.withLock { state in
            defer { state.writer = nil; state.drainers = [] }
            return (state.writer, state.drainers)
        }
        writer?.resume(throwing: error)
        for drainer in drainers { drainer.resume(throwing: error) }
    }

    private func wakeOpeners() {
        let openers = state.withLock { state in
            defer { state.openers = [] }
            return state.openers
        }
        for opener in openers { opener.resume() }
    }
}
