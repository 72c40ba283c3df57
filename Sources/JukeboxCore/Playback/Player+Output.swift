import Logging
import Synchronization

// The output: taking it up (a bed's mixer started), handing it over to a new one between
// clips (the old one retired first, so the device never has two owners), and the device's
// state, from the queue's retries and the mixer's own.
extension Player {
    /// Takes the output up: a bed's mixer opens the device and plays the music from now on,
    /// with no clip needed. Called once the daemon runs (and by the first clip, if earlier).
    public func start() {
        guard !started else { return }
        started = true
        startBed()
    }

    /// Starts the bed of the output in use, if it has one; what it says of its device reaches
    /// the player's device state.
    func startBed() {
        // The mixer opened the device, or it failed: the device's state follows.
        bed?.start(musicOn: musicOn, level: bedLevel) { [weak self] in
            Task { await self?.deviceChanged() }
        }
    }

    /// How long the oldest unfinished call to the output clips play through now has run:
    /// a call stuck in a driver is what the systemd watchdog must see. During a switch of
    /// output, this is the old one until the clip on it has ended and it is closed.
    public nonisolated func outputStall() -> Duration? {
        watched.withLock { $0 }.longestCall()
    }

    /// The queue could not play because of `error`, and tries again in `retryIn`: the
    /// device shows as retrying until it opens, or until `deviceWaitEnded`.
    public func waitForDevice(_ error: AudioDeviceError, retryIn: Duration) {
        // The waits before this one: how long the device has been missing, near enough.
        if let before = deviceProblem { queueMissingFor += before.retryIn }
        deviceProblem = (error, retryIn)
        deviceChanged(always: true)
    }

    /// How long the device has been missing: while the queue waits for it, or while the
    /// bed's mixer tries it again, whichever is longer.
    public var missingFor: Duration {
        var bedMissing: Duration = .zero
        if started, case .failed(_, _, let missing) = bed?.deviceState { bedMissing = missing }
        return max(queueMissingFor, bedMissing)
    }

    /// The queue stopped waiting for the device (the entry was skipped, failed, or the
    /// daemon stops): it shows as closed again, as it is.
    public func deviceWaitEnded() {
        guard deviceProblem != nil else { return }
        deviceProblem = nil
        queueMissingFor = .zero
        deviceChanged()
    }

    /// Works out the device's state from what the player holds, and publishes it when it
    /// changed (a retry is published each time, with its new delay). Open and closed are the
    /// clips' use of it; under a bed, a device the mixer tries again shows as retrying too.
    func deviceChanged(always: Bool = false) {
        let mixer = started ? bed?.deviceState : nil
        let state: DeviceState = if let deviceProblem {
            .retrying(after: deviceProblem.retryIn, error: deviceProblem.error)
        } else if case .failed(let error, let retryIn, _) = mixer {
            .retrying(after: retryIn, error: error)
        } else if openFormat != nil {
            .open
        } else {
            .closed
        }
        guard always || state != device else { return }
        device = state
        events?.publish(.device(state))
    }

    /// Whether the output plays a music bed.
    public var hasBed: Bool { bed != nil }

    /// Whether music comes in through the bed now: a clip then waits for it to be lowered.
    public var bedMusicPlays: Bool { bed?.bedState.music == .playing }

    /// Turns the bed's music on or off (the clips play either way).
    public func setMusicOn(_ on: Bool) {
        guard on != musicOn else { return }
        musicOn = on
        bed?.setMusicOn(on)
        events?.publish(.music(on: on))
    }

    /// Lowers the bed's music to `percent` of its own level (100: back up), as a step of the
    /// bed's ducker.
    public func setBedLevel(_ percent: Int) {
        bedLevel = min(max(percent, 0), 100)
        bed?.setDuckLevel(bedLevel)
    }

    /// Plays through `output` from now on. While a clip plays, it finishes on the old output;
    /// the switch happens before the next clip or when the player goes idle. The new output
    /// opens nothing until then: the old one has let the device go first.
    public func useOutput(_ output: AudioOutput) async {
        if let waiting = pendingSink { await waiting.converting.retire() }
        pendingSink = Self.stages(output, makeRateConverter: makeRateConverter)
        if !isPlaying { await switchOutputIfPending() }
    }

    /// An output without a bed.
    public func useSink(_ sink: any AudioSink) async {
        await useOutput(AudioOutput(sink))
    }

    /// The output's stages: the bed (if any), the watchdog's watch, and the conversion stage.
    struct Stages {
        var watched: WatchedSink
        var converting: ConvertingSink
        var bed: (any MusicBed)?
    }

    static func stages(_ output: AudioOutput, makeRateConverter: RateConverterFactory?) -> Stages {
        let watched = WatchedSink(output.sink)
        return Stages(watched: watched, converting: ConvertingSink(watched, makeRateConverter: makeRateConverter), bed: output.bed)
    }

    func switchOutputIfPending() async {
        guard let next = pendingSink else { return }
        pendingSink = nil
        if openFormat != nil {
            await stopSilence(discardingBuffered: false)
            try? await sink.drain()
            await closeDevice()
        }
        // The old output lets the device go before the new one is started.
        await sink.retire()
        logger.notice("output is now \"\(next.converting.deviceName)\" (was \"\(sink.deviceName)\")", metadata: ["device": "\(next.converting.deviceName)"])
        sink = next.converting
        bed = next.bed
        watched.withLock { $0 = next.watched }
        if started { startBed() }
        deviceChanged()
    }
}
