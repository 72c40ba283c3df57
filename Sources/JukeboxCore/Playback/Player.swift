import Logging
import Synchronization

/// Plays one clip at a time from a decoder into a sink. It does no I/O itself: it moves
/// blocks in the clip's own format through the conversion stage (`ConvertingSink`), applies
/// gain and volume, keeps the device open across clips of the same format
/// (gapless) and, depending on `PlaybackOptions.keepDeviceOpen`, closes it after an idle
/// time so other programs can use it or keeps it fed with silence.
///
/// The player owns the output and the device's state: which output clips play through
/// (and which one the watchdog watches, `outputStall`), whether it is open, and whether it
/// is missing while the queue retries it (`waitForDevice`). It is the one writer of that
/// state and the one publisher of its `device` event.
public actor Player {
    /// The output clips play through, behind the conversion stage. A new one (a reload that
    /// names another device) is taken up between clips: see `useSink(_:)`.
    internal(set) var sink: ConvertingSink
    /// The output to switch to once the clip playing now has ended.
    var pendingSink: Stages?
    /// The output `sink` plays through, for the watchdog: it is read without waiting for
    /// the actor, and changes only when `sink` does.
    nonisolated let watched: Mutex<WatchedSink>
    let makeRateConverter: RateConverterFactory?
    /// The music under the clips, when the output has a bed (the session's `bed`): a stage
    /// of the output that holds the device itself, from `start()` until the output is retired.
    var bed: (any MusicBed)?
    /// Whether the output's stages that run by themselves (the bed's mixer) have been started:
    /// from `start()`, or the first clip, on.
    var started = false
    /// Whether the bed's music is on (`jukebox bed on|off`): the player's to keep, and the
    /// state file's, so it holds across a new output and a restart. The bed follows it.
    public internal(set) var musicOn = true
    /// How far the bed's music is lowered now, 0–100 of its own level (100: not lowered): set by
    /// the bed's ducker (`BedLevelTarget`), and handed to a new output's bed as it starts.
    public internal(set) var bedLevel = 100
    /// The device's problem while the queue waits for it to come back, and when it is tried
    /// again (`waitForDevice`).
    var deviceProblem: (error: AudioDeviceError, retryIn: Duration)?
    /// How long the queue has been waiting for the device, as `waitForDevice` counts it.
    var queueMissingFor: Duration = .zero
    /// The device's state as `status` and the `device` event show it; see `deviceChanged`.
    public internal(set) var device: DeviceState = .closed
    let events: EventBus?
    let decoder: any ClipDecoder
    let clock: any Clock<Duration>
    public internal(set) var options: PlaybackOptions
    let logger: Logger

    /// The format the device is open for (the conversion stage takes clips in their own).
    var openFormat: AudioFormat?
    var stopRequested = false
    /// Whether the queue has paused: read at every block of the clip playing now. The queue
    /// owns the pause; the player only stops when it is asked to, and says where.
    var pauseRequested: PauseSwitch?
    var idleCloser: Task<Void, Never>?
    /// Writes silence while nothing plays, when the device is kept open.
    var silenceFeeder: Task<Void, Never>?
    /// Set once the device has played everything written; anything that writes clears it.
    var drained = false
    /// Bumped on every play so a pending idle close can tell it is stale.
    var generation = 0
    public internal(set) var volume: Double
    /// The level of its own the clip playing now was asked for at (`QueueEntry.Playing`);
    /// nil: it plays at `volume`.
    var ownVolume: Double?
    /// The clip playing now is an alert's, whose level `maxVolume` does not hold.
    var aboveCeiling = false
    /// What the clip playing now is played at.
    var level: Double { min(ownVolume ?? volume, aboveCeiling ? 1 : ceiling) }
    /// The most any clip is played at: the session's `maxVolume`, set by `VolumeControl`.
    /// It holds a clip's own level too, queued before the cap was lowered.
    var ceiling: Double = 1
    public internal(set) var isPlaying = false
    /// What the device was last opened for: the format asked, and the device's own when it
    /// differs (converted to), for `jukebox test`.
    public internal(set) var lastOpened: (device: String, format: AudioFormat, deviceFormat: AudioFormat?)?
    /// The gain that brings each clip to the session's loudness.
    let loudness: ClipLoudness?
    /// Frames of the current clip sent to the device, and its length. Set only inside
    /// `stream`, where an interrupted write is picked up again (not in the lead-in or a drain).
    var progress: (frames: Int, total: Int, format: AudioFormat)?
    /// The volume the device's buffered audio was written at, while a change waits to be
    /// applied to it.
    var volumeBefore: Double?

    /// Frames per block for `format`: the sink's `blockDuration` (at least 64 frames), within
    /// `AudioFormat.maxBlockSamples`.
    static func blockFrames(_ format: AudioFormat, duration: Duration) -> Int {
        let cap = format.maxBlockFrames
        return max(min(format.frames(in: duration), cap), min(64, cap))
    }

    /// `output`: the output (an ALSA device, a Snapcast pipe, with a bed or without); the
    /// player puts it behind the watchdog's watch and the conversion stage, which converts
    /// rates with `makeRateConverter` (without one, only sample formats and channels).
    public init(
        output: AudioOutput, makeRateConverter: RateConverterFactory? = nil, decoder: any ClipDecoder, clock: any Clock<Duration> = ContinuousClock(),
        volume: Double = 1, options: PlaybackOptions = PlaybackOptions(), events: EventBus? = nil, loudness: ClipLoudness? = nil, logger: Logger
    ) {
        self.loudness = loudness
        self.makeRateConverter = makeRateConverter
        let output = Self.stages(output, makeRateConverter: makeRateConverter)
        self.bed = output.bed
        self.sink = output.converting
        self.watched = Mutex(output.watched)
        self.events = events
        self.decoder = decoder
        self.clock = clock
        self.volume = volume
        self.options = options
        self.logger = logger
    }

    /// An output without a bed.
    public init(
        sink: any AudioSink, makeRateConverter: RateConverterFactory? = nil, decoder: any ClipDecoder, clock: any Clock<Duration> = ContinuousClock(),
        volume: Double = 1, options: PlaybackOptions = PlaybackOptions(), events: EventBus? = nil, loudness: ClipLoudness? = nil, logger: Logger
    ) {
        self.init(
            output: AudioOutput(sink), makeRateConverter: makeRateConverter, decoder: decoder, clock: clock, volume: volume, options: options, events: events,
            loudness: loudness, logger: logger)
    }

    /// Applies new options (session reload). Lead-in applies from the next device open.
    public func configure(_ options: PlaybackOptions) async {
        let wasAlways = self.options.keepDeviceOpen == .always
        self.options = options
        guard !isPlaying, openFormat != nil else { return }
        if wasAlways, options.keepDeviceOpen == .idle {
            await stopSilence()
            await becameIdle()
        } else if !wasAlways, options.keepDeviceOpen == .always {
            cancelIdleClose()
            startSilence()
        }
    }

    public var isDeviceOpen: Bool { openFormat != nil }
    public var deviceName: String { sink.deviceName }

    /// How far into the current clip playback is, and how long the clip is.
    public var position: (elapsed: Duration, total: Duration)? {
        progress.map { ($0.format.duration(frames: $0.frames), $0.format.duration(frames: $0.total)) }
    }

    /// What `status` shows of the player, read at one moment.
    public struct Snapshot: Sendable {
        public var deviceName: String
        /// Open (between clips, too, until the idle close), closed, or missing and retried.
        public var device: DeviceState
        public var position: (elapsed: Duration, total: Duration)?
        public var volume: Double
        public var underruns: Int
        /// The music bed, when the output has one.
        public var bed: MusicBedState?
    }

    public func snapshot() -> Snapshot {
        Snapshot(deviceName: sink.deviceName, device: device, position: position, volume: volume, underruns: sink.underruns, bed: bed?.bedState)
    }

    /// Sets the volume. While a clip plays, what the device holds but has not played yet is
    /// taken back and written again at the new volume, so the change is heard at once rather
    /// than after the buffer; see `stream`.
    public func setVolume(_ volume: Double) {
        let volume = min(max(volume, 0), 1)
        guard volume != self.volume else { return }
        // Paused, nothing plays: resuming fades in to the new volume. A clip at a level of
        // its own stays at it.
        let retake = progress != nil && ownVolume == nil
        if retake, volumeBefore == nil { volumeBefore = level }
        self.volume = volume
        if retake { sink.interrupt() }
    }

    /// Sets the most any clip is played at (`maxVolume`). A clip playing above a lowered
    /// ceiling comes down to it at once, as a volume change does.
    public func setCeiling(_ ceiling: Double) {
        let ceiling = min(max(ceiling, 0), 1)
        guard ceiling != self.ceiling else { return }
        let before = level
        self.ceiling = ceiling
        guard progress != nil, level != before else { return }
        if volumeBefore == nil { volumeBefore = before }
        sink.interrupt()
    }

    /// How one call of `play` ended.
    public enum Played: Sendable, Equatable {
        /// The clip ended: played, stopped, or failed.
        case ended(PlayOutcome)
        /// The pause switch went on. The listener stopped hearing the clip at `frame` (after
        /// a short fade); `play(_:from:)` with it goes on from there, fading in.
        case paused(atFrame: Int, elapsed: Duration, total: Duration)
        /// An urgent entry cut in (`PauseSwitch.cutRequested`): the listener stopped hearing
        /// the clip at `frame`, after a short fade, and the next clip can follow at once.
        case cut(atFrame: Int, elapsed: Duration)

        /// How the clip ended; nil when it was paused.
        public var outcome: PlayOutcome? { if case .ended(let outcome) = self { outcome } else { nil } }
    }

    /// Plays `clip` to the end, or until `stopCurrent()`, task cancellation, or `pause`
    /// going on (a pause or a cut); from `frame`, with a fade-in, when it goes on after a
    /// pause or a cut. `playing` gives it a level of its own, and a length it ends at, fading
    /// out, as if that were its end.
    /// Throws `AudioDeviceError` when the device fails; the device is then closed so the
    /// next attempt reopens it.
    public func play(_ clip: PlayableClip, from frame: Int = 0, pause: PauseSwitch? = nil, playing: QueueEntry.Playing = .asIs) async throws -> Played {
        cancelIdleClose()
        await switchOutputIfPending()
        start()
        await stopSilence()
        drained = false
        stopRequested = false
        pauseRequested = pause
        isPlaying = true
        ownVolume = playing.volume
        aboveCeiling = playing.aboveCeiling
        defer {
            isPlaying = false
            ownVolume = nil
            aboveCeiling = false
            pauseRequested = nil
            progress = nil
            volumeBefore = nil
        }
        let decoded: any DecodedClip
        do {
            decoded = try await decoder.open(clip.source)
        } catch {
            return .ended(.failed(reason: "\(error)"))
        }
        do {
            try await prepareDevice(for: decoded.format)
            if frame > 0 { try await decoded.seek(toFrame: frame) }
            let levelling = await loudness?.gain(for: clip.source) ?? 0
            let end = playing.stopAfter.map { decoded.format.frames(in: $0) }
            let played = try await stream(decoded, from: frame, to: end, gain: SampleMath.linearGain(decibels: clip.gainDecibels + levelling))
            await decoded.close()
            return played
        } catch let error as AudioDeviceError {
            await decoded.close()
            await closeDevice()
            throw error
        } catch {
            await decoded.close()
            return .ended(.failed(reason: "\(error)"))
        }
    }

    /// Stops the clip being played now (skip); the sink's buffer is discarded.
    public func stopCurrent() {
        guard isPlaying else { return }
        stopRequested = true
        sink.interrupt()
    }

    /// The pause switch of the clip playing now went on, for a pause or a cut: a write
    /// waiting for room stops waiting, so it is heard at once. (The switch itself is read at
    /// every block.)
    public func pauseSwitched() {
        if isPlaying { sink.interrupt() }
    }

    /// Waits until the device has played everything written, when nothing follows the clip
    /// that just ended, so that clip counts as played only once its tail was heard. A device
    /// that fails meanwhile (unplugged, sound server gone) throws, and the queue plays the
    /// clip again. With `keepDeviceOpen: always` the tail runs on into silence instead.
    public func finishBuffered() async throws {
        guard openFormat != nil, options.keepDeviceOpen == .idle, !drained else { return }
        do {
            try await sink.drain()
        } catch {
            await closeDevice()
            throw error
        }
        drained = true
    }

    /// Called when the queue has run dry: lets buffered audio finish (unless the last clip's
    /// tail already has), then closes the device if nothing else starts within `idleTimeout`.
    public func becameIdle() async {
        await switchOutputIfPending()
        guard openFormat != nil else { return }
        if options.keepDeviceOpen == .always {
            startSilence()
            return
        }
        do {
            try await finishBuffered()
        } catch {
            logger.warning("\(error)")
            return
        }
        logger.debug("\(sink.deviceName) drained: everything queued has been played")
        let expected = generation
        let (clock, timeout) = (clock, options.idleTimeout)
        idleCloser = Task { [weak self] in
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            await self?.closeIfStill(idleSince: expected)
        }
    }

    /// Stops everything and releases the device (shutdown).
    public func shutdown() async {
        cancelIdleClose()
        await stopSilence(discardingBuffered: false)
        if openFormat != nil { await sink.cancel() }
        await closeDevice()
        await sink.retire()
    }

    func prepareDevice(for format: AudioFormat) async throws {
        generation += 1
        if let open = openFormat {
            if open == format { return }
            // A different rate or layout needs new hardware parameters: finish what is
            // buffered so the previous clip's tail is not cut, then reopen.
            try await sink.drain()
            await closeDevice()
        }
        _ = try await sink.open(format)
        openFormat = format
        lastOpened = (sink.deviceName, format, sink.deviceFormat.flatMap { $0 == format ? nil : $0 })
        if let recovered = deviceProblem?.error {
            logger.notice("audio device \"\(recovered.device)\" is working again", metadata: ["device": "\(recovered.device)"])
            deviceProblem = nil
            queueMissingFor = .zero
        }
        deviceChanged()
        let device = sink.deviceFormat.map { $0 == format ? "" : " as \($0)" } ?? ""
        logger.debug("opened \(sink.deviceName) for \(format)\(device)", metadata: ["device": "\(sink.deviceName)"])
        var leadIn = format.frames(in: options.leadIn)
        while leadIn > 0 {
            let frames = min(leadIn, format.maxBlockFrames)
            do {
                try await sink.write(.silence(format, frames: frames))
            } catch is WriteInterrupted {
                // A skip or pause during the lead-in: the clip's loop sees it next.
                break
            }
            leadIn -= frames
        }
    }

    /// Plays `decoded` from `start`, to its end or to `stop`, where the last fade's length
    /// fades out.
    func stream(_ decoded: any DecodedClip, from start: Int, to stop: Int?, gain: Double) async throws -> Played {
        let blockFrames = Self.blockFrames(decoded.format, duration: sink.blockDuration)
        let fadeFrames = min(decoded.format.frames(in: options.fade), decoded.format.maxBlockFrames)
        // Stopping before the clip's end: where, and where the fade to it begins.
        let stop = stop.flatMap { $0 < decoded.frameCount ? $0 : nil }
        let end = stop ?? decoded.frameCount
        let fadeOutAt = stop.map { max(0, $0 - fadeFrames) }
        var frames = start
        // Going on after a pause: the first block rises from silence.
        var fadingIn = start > 0 && fadeFrames > 0
        progress = (start, decoded.frameCount, decoded.format)
        while true {
            if stopRequested || Task.isCancelled {
                _ = await cutShort(decoded, at: frames, gain: gain, fadeFrames: fadeFrames)
                // Stopping the daemon: let the fade be heard before the device is released.
                if Task.isCancelled { try? await sink.drain() }
                return .ended(.stopped)
            }
            if let pause = pauseRequested, pause.stops {
                // Nothing of it written yet (paused before it began): nothing to cut.
                if frames > start {
                    frames = await cutShort(decoded, at: frames, gain: gain, fadeFrames: fadeFrames)
                }
                // Cut for an urgent entry, which follows at once: the fade runs on into it.
                if pause.cutRequested, !pause.isOn { return .cut(atFrame: frames, elapsed: decoded.format.duration(frames: frames)) }
                // Let the fade play out rather than underrun; or keep the device fed.
                if options.keepDeviceOpen == .always { startSilence() } else { try await sink.drain() }
                let format = decoded.format
                return .paused(atFrame: frames, elapsed: format.duration(frames: frames), total: format.duration(frames: decoded.frameCount))
            }
            var rampFrom: Double?
            if let before = volumeBefore {
                volumeBefore = nil
                // After a pause nothing is buffered at the old volume: the fade-in rises to the new one.
                if !fadingIn {
                    frames = try await retake(decoded, at: frames)
                    progress?.frames = frames
                    if fadeFrames > 0 { rampFrom = gain * before }
                }
            }
            var size = fadingIn || rampFrom != nil ? fadeFrames : blockFrames
            // Stopping at `stop`: up to the fade, then the fade as one block.
            let fadingOut = fadeOutAt.map { frames >= $0 } ?? false
            if let fadeOutAt { size = fadingOut ? end - frames : min(size, fadeOutAt - frames) }
            guard size > 0, var block = try await decoded.read(maxFrames: size) else { break }
            if let rampFrom {
                // From the old volume to the new over a fade's length, so the change is no step.
                SampleMath.ramp(&block, from: rampFrom, to: gain * level)
            } else {
                SampleMath.scale(&block, by: gain * level)
            }
            if fadingIn {
                SampleMath.ramp(&block, from: 0, to: 1)
                fadingIn = false
            }
            if fadingOut { SampleMath.ramp(&block, from: 1, to: 0) }
            do {
                try await withTaskCancellationHandler {
                    try await sink.write(block)
                } onCancel: { [sink] in
                    sink.interrupt()
                }
                frames += block.frames
            } catch let interrupted as WriteInterrupted {
                // Stopped or paused while waiting for room: the rest of the block was not sent.
                // Read it again next time round, in case a pause was already resumed.
                frames += interrupted.framesWritten
                try await decoded.seek(toFrame: frames)
            }
            progress?.frames = frames
        }
        // A few frames short is an estimate in the header (compressed formats), not a cut.
        if end - frames > decoded.format.sampleRate / 10 {
            let (played, expected) = (decoded.format.duration(frames: frames), decoded.format.duration(frames: decoded.frameCount))
            return .ended(.endedEarly(reason: "the file holds less audio than its header says (cut short while it played, or damaged): played \(DurationText.format(played)) of \(DurationText.format(expected))"))
        }
        return .ended(.completed(duration: decoded.format.duration(frames: frames)))
    }

    func closeIfStill(idleSince expected: Int) async {
        guard expected == generation, !isPlaying, openFormat != nil else { return }
        logger.debug("closing \(sink.deviceName) after \(DurationText.format(options.idleTimeout)) idle")
        await closeDevice()
    }

    func closeDevice() async {
        guard openFormat != nil else { return }
        openFormat = nil
        await sink.close()
        deviceChanged()
    }

    func cancelIdleClose() {
        idleCloser?.cancel()
        idleCloser = nil
    }
}
