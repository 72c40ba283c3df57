import CALSA
import Glibc
import JukeboxAudio
import Logging
import Synchronization

/// Plays through an ALSA PCM (`default`, `plughw:1,0`, `dmix`, a `file:` PCM in tests…).
/// This is the only file that imports ALSA.
///
/// Each sink owns one serial thread (`BlockingWorkQueue`) for every libasound call, since
/// `snd_pcm_writei` and waiting for a drain block for as long as the audio takes to play.
/// The PCM is opened non-blocking so a busy device fails at once instead of hanging, and
/// writes wait with a timeout so an unplugged or wedged device is reported, not waited on.
public final class AlsaSink: AudioSink, @unchecked Sendable {
    // @unchecked: the mutable state (`pcm` and what was learnt when it opened) is only read
    // and written on `queue`; `underrunTotal` is atomic and `wakeFD` is atomic (made at init, or at the first open that can).
    public let deviceName: String
    private let queue: BlockingWorkQueue
    private let bufferMicroseconds: UInt32
    private let periodMicroseconds: UInt32
    private var pcm: OpaquePointer?
    private var frameBytes = 4
    private var bufferFrames = 0
    private var sampleRate = 44_100
    /// Cleared once the device turns out to ignore rewinds (it stays the same device).
    private var rewindWorks = true
    /// Signalled by `interrupt()`; polled together with the PCM while a write waits for room.
    /// -1 until made: if the process is out of descriptors at start-up, opening the device
    /// tries again (and says why it cannot play) rather than leaving skips to wait a period.
    private let wakeFD = Atomic<Int32>(-1)
    /// The last open failed: the next one reads ALSA's configuration afresh, so a PCM the
    /// user has since added to ~/.asoundrc or /etc/asound.conf is found without a restart.
    private var rereadConfiguration = false
    /// Read without going through `queue`, so `status` answers even while a device call hangs.
    private let underrunTotal = Atomic<Int>(0)

    /// A 500 ms buffer in four periods, as aplay sets it up: the device thread (and, on the
    /// pulse plugin, its sound-server thread) wakes once a period, so longer periods cost
    /// less; skips and pauses do not wait for a period (`interrupt()`, `rewind`).
    /// `blockDuration`: how much the player hands over per write (see the property).
    public init(
        device: String, bufferTime: Duration = .milliseconds(500), periodTime: Duration = .milliseconds(125),
        blockDuration: Duration = .seconds(1)
    ) {
        self.deviceName = device
        self.blockDuration = blockDuration
        self.queue = BlockingWorkQueue(label: "jukebox.alsa")
        self.bufferMicroseconds = UInt32(bufferTime.milliseconds * 1000)
        self.periodMicroseconds = UInt32(periodTime.milliseconds * 1000)
        wakeFD.store(eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)), ordering: .relaxed)
    }

    deinit {
        if let pcm { snd_pcm_close(pcm) }
        let wake = wakeFD.load(ordering: .relaxed)
        if wake >= 0 { Glibc.close(wake) }
    }

    public func interrupt() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD.load(ordering: .relaxed), &one, 8)
    }

    /// Forgets an interrupt meant for a write that has already finished.
    private func clearInterrupt() {
        var value: UInt64 = 0
        _ = Glibc.read(wakeFD.load(ordering: .relaxed), &value, 8)
    }

    public var underruns: Int { underrunTotal.load(ordering: .relaxed) }

    /// A second at a time by default, twice the buffer: this thread feeds the block in as
    /// room appears, so the player's task and this thread each wake once a second rather than
    /// once a period. A skip, pause, stop or volume change interrupts the write, so none waits
    /// for it.
    public let blockDuration: Duration

    public func open(_ format: AudioFormat) async throws -> AudioFormat {
        try await queue.run { try self.openBlocking(format) }
    }

    public func write(_ buffer: AudioBuffer) async throws {
        try await queue.run { try self.writeBlocking(buffer) }
    }

    public func drain() async throws {
        try await queue.run { try self.drainBlocking() }
    }

    public func cancel() async -> Int {
        await queue.run {
            self.clearInterrupt()
            guard let pcm = self.pcm else { return 0 }
            // What is written but not yet heard: the caller rewinds by this much on pause.
            var delay: snd_pcm_sframes_t = 0
            if snd_pcm_delay(pcm, &delay) < 0 || snd_pcm_state(pcm) != SND_PCM_STATE_RUNNING && snd_pcm_state(pcm) != SND_PCM_STATE_PREPARED {
                delay = 0
            }
            snd_pcm_drop(pcm)
            snd_pcm_prepare(pcm)
            return max(0, Int(delay))
        }
    }

    public func rewind(upTo maxFrames: Int, keeping: Int) async -> Int {
        await queue.run {
            self.clearInterrupt()
            guard let pcm = self.pcm, self.rewindWorks else { return 0 }
            // snd_pcm_rewindable counts frames the hardware has not fetched yet.
            let rewindable = snd_pcm_rewindable(pcm)
            let wanted = min(maxFrames, Int(rewindable) - keeping)
            var before: snd_pcm_sframes_t = 0
            guard rewindable > 0, wanted > 0, snd_pcm_delay(pcm, &before) == 0 else { return 0 }
            let taken = snd_pcm_rewind(pcm, snd_pcm_uframes_t(wanted))
            guard taken > 0 else { return 0 }
            // Some plugins (pulse, for one) accept a rewind but have already handed the audio
            // to a server that plays it anyway; their delay does not shrink. Writing a fade
            // after that would only add to what is heard, so such a device is cut instead.
            var after: snd_pcm_sframes_t = 0
            if before > 0, snd_pcm_delay(pcm, &after) == 0, after > before - taken / 2 {
                self.rewindWorks = false
                return 0
            }
            return Int(taken)
        }
    }

    /// `snd_pcm_pause`, where the device and its driver allow it (the pulse plugin does; some
    /// hardware does not): what the buffer holds waits, and plays on when let go.
    public func hold(_ held: Bool) async -> Bool {
        await queue.run {
            guard let pcm = self.pcm else { return false }
            let state = snd_pcm_state(pcm)
            if held {
                guard state == SND_PCM_STATE_RUNNING else { return state == SND_PCM_STATE_PAUSED }
                return snd_pcm_pause(pcm, 1) == 0
            }
            guard state == SND_PCM_STATE_PAUSED else { return true }
            if snd_pcm_pause(pcm, 0) == 0 { return true }
            // Could not play on: started again empty, as after an underrun.
            snd_pcm_drop(pcm)
            return snd_pcm_prepare(pcm) == 0
        }
    }

    public func close() async {
        await queue.run {
            if let pcm = self.pcm { snd_pcm_close(pcm) }
            self.pcm = nil
        }
    }

    // MARK: - On the device thread

    private func openBlocking(_ format: AudioFormat) throws -> AudioFormat {
        if let pcm { snd_pcm_close(pcm); self.pcm = nil }
        if wakeFD.load(ordering: .relaxed) < 0 {
            let made = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
            guard made >= 0 else {
                throw AudioDeviceError(
                    code: .ioError, device: deviceName, operation: "open", reason: "cannot make its wake-up descriptor (eventfd): \(FileReadError(errno: errno))",
                    hint: "the daemon has too many files open; see its open-files limit (LimitNOFILE=)")
            }
            wakeFD.store(made, ordering: .relaxed)
        }
        if rereadConfiguration {
            // Every PCM of ours is closed here, so nothing still uses the old tree.
            snd_config_update_free_global()
        }
        var handle: OpaquePointer?
        let opened = snd_pcm_open(&handle, deviceName, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        rereadConfiguration = opened < 0
        guard opened >= 0, let handle else { throw error("open", opened) }
        do {
            let sampleFormat = try configure(handle, format)
            pcm = handle
            frameBytes = sampleFormat.bytesPerSample * format.channels
            sampleRate = format.sampleRate
            return AudioFormat(sampleFormat: sampleFormat, sampleRate: format.sampleRate, channels: format.channels)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
    }

    private func configure(_ pcm: OpaquePointer, _ format: AudioFormat) throws -> SampleFormat {
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        defer { snd_pcm_hw_params_free(hw) }
        try check(snd_pcm_hw_params_any(pcm, hw), "read the device's capabilities")
        try check(snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "use interleaved access")
        // The clip's own sample format first, so unity gain is bit-exact; then what converts best.
        let candidates = [format.sampleFormat] + [SampleFormat.s32, .s16, .float32].filter { $0 != format.sampleFormat }
        guard let chosen = candidates.first(where: { snd_pcm_hw_params_test_format(pcm, hw, Self.alsaFormat($0)) == 0 }) else {
            throw unsupported(format, "it accepts none of the sample formats this player produces (s16, s32, float)")
        }
        try check(snd_pcm_hw_params_set_format(pcm, hw, Self.alsaFormat(chosen)), "set sample format \(chosen)")
        if snd_pcm_hw_params_set_channels(pcm, hw, UInt32(format.channels)) < 0 {
            throw unsupported(format, "it cannot play \(format.channels) channel(s)")
        }
        snd_pcm_hw_params_set_rate_resample(pcm, hw, 1)
        var rate = UInt32(format.sampleRate)
        var direction: Int32 = 0
        if snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &direction) < 0 || rate != UInt32(format.sampleRate) {
            throw unsupported(format, "it cannot play at \(format.sampleRate) Hz")
        }
        var bufferTime = bufferMicroseconds, periodTime = periodMicroseconds
        snd_pcm_hw_params_set_buffer_time_near(pcm, hw, &bufferTime, &direction)
        snd_pcm_hw_params_set_period_time_near(pcm, hw, &periodTime, &direction)
        try check(snd_pcm_hw_params(pcm, hw), "apply the hardware parameters")

        var bufferSize: snd_pcm_uframes_t = 0, periodSize: snd_pcm_uframes_t = 0
        snd_pcm_hw_params_get_buffer_size(hw, &bufferSize)
        snd_pcm_hw_params_get_period_size(hw, &periodSize, &direction)
        bufferFrames = Int(bufferSize)
        var sw: OpaquePointer?
        snd_pcm_sw_params_malloc(&sw)
        defer { snd_pcm_sw_params_free(sw) }
        snd_pcm_sw_params_current(pcm, sw)
        // Start only once the buffer is nearly full, so the first block cannot underrun and
        // clip the start of the sound; `drain` starts shorter clips.
        snd_pcm_sw_params_set_start_threshold(pcm, sw, bufferSize > periodSize ? bufferSize - periodSize : bufferSize)
        snd_pcm_sw_params_set_avail_min(pcm, sw, periodSize)
        try check(snd_pcm_sw_params(pcm, sw), "apply the software parameters")
        try check(snd_pcm_prepare(pcm), "prepare")
        return chosen
    }

    private func writeBlocking(_ buffer: AudioBuffer) throws {
        guard let pcm else { throw AudioDeviceError(code: .ioError, device: deviceName, operation: "write", reason: "the device is not open") }
        try buffer.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            let total = bytes.count / frameBytes
            var written = 0
            var silentWaits = 0
            while written < total {
                let result = snd_pcm_writei(pcm, base + written * frameBytes, snd_pcm_uframes_t(total - written))
                if result >= 0 {
                    written += Int(result)
                    silentWaits = 0
                } else if result == -Int(EAGAIN) {
                    // The buffer is full: wait for room, but not forever — a device that accepts
                    // nothing for 3 s is gone, and the queue must hear about it.
                    switch try waitForRoom(pcm) {
                    case .room:
                        silentWaits = 0
                    case .timedOut:
                        silentWaits += 1
                        if silentWaits >= 3 {
                            throw AudioDeviceError(code: .stalled, device: deviceName, operation: "write",
                                                   reason: "the device accepted no audio for 3 s", hint: "is it still connected and powered?")
                        }
                    case .interrupted:
                        throw WriteInterrupted(framesWritten: written)
                    }
                } else {
                    try recover(pcm, Int32(result))
                }
            }
        }
    }

    /// Waits until what was written has been played, then stops the stream. Not
    /// `snd_pcm_drain`: in blocking mode it can wait forever on a device that has gone (a
    /// sound server that died, a DAC powered off), and that would wedge this thread.
    private func drainBlocking() throws {
        guard let pcm else { return }
        var delay: snd_pcm_sframes_t = 0
        let initial = snd_pcm_state(pcm)
        guard initial == SND_PCM_STATE_RUNNING || initial == SND_PCM_STATE_PREPARED else {
            snd_pcm_prepare(pcm)
            return
        }
        let framesPerMillisecond = max(sampleRate / 1000, 1)
        var stalledMilliseconds = 0
        var previous = Int.max
        while true {
            let result = snd_pcm_delay(pcm, &delay)
            let state = snd_pcm_state(pcm)
            // Ran dry: everything was played. Plugins differ in how they say so (-EPIPE, the
            // state, or a delay of 0 with the buffer empty; pulse leaves a small stale delay).
            if result == -EPIPE || state == SND_PCM_STATE_XRUN || state == SND_PCM_STATE_SETUP { break }
            // Nothing queued (already drained, or nothing written since): done, and an empty
            // stream is not started.
            if result == 0, delay <= 0, snd_pcm_avail(pcm) >= bufferFrames { break }
            if state == SND_PCM_STATE_PREPARED {
                // Not started: a clip shorter than the start threshold, or a plugin that starts
                // late. Start it, or it would never play, and keep waiting.
                snd_pcm_start(pcm)
            }
            if result < 0, state != SND_PCM_STATE_PREPARED { throw error("drain", result) }
            // Sleep on this device thread until about when the queued audio ends, a little at a time.
            let waitMilliseconds = min(max(Int(delay) / framesPerMillisecond, 1), 20)
            usleep(UInt32(waitMilliseconds * 1000))
            stalledMilliseconds = Int(delay) < previous ? 0 : stalledMilliseconds + waitMilliseconds
            previous = Int(delay)
            if stalledMilliseconds >= 3000 {
                snd_pcm_drop(pcm)
                snd_pcm_prepare(pcm)
                throw AudioDeviceError(code: .stalled, device: deviceName, operation: "drain",
                                       reason: "the device played nothing for 3 s", hint: "is it still connected and powered?")
            }
        }
        snd_pcm_drop(pcm)
        let prepared = snd_pcm_prepare(pcm)
        if prepared < 0 { throw error("prepare", prepared) }
    }

    private enum Wait { case room, timedOut, interrupted }

    /// Polls the PCM together with `wakeFD`, so `interrupt()` ends the wait at once.
    private func waitForRoom(_ pcm: OpaquePointer) throws -> Wait {
        let count = Int(snd_pcm_poll_descriptors_count(pcm))
        guard count > 0 else {
            let ready = snd_pcm_wait(pcm, 1000)
            if ready < 0 { try recover(pcm, Int32(ready)) }
            return ready == 0 ? .timedOut : .room
        }
        var descriptors = [pollfd](repeating: pollfd(), count: count + 1)
        snd_pcm_poll_descriptors(pcm, &descriptors, UInt32(count))
        descriptors[count] = pollfd(fd: wakeFD.load(ordering: .relaxed), events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptors, nfds_t(count + 1), 1000)
        if ready == 0 { return .timedOut }
        if ready < 0 { return errno == EINTR ? .room : .timedOut }
        if descriptors[count].revents & Int16(POLLIN) != 0 {
            clearInterrupt()
            return .interrupted
        }
        var events: UInt16 = 0
        snd_pcm_poll_descriptors_revents(pcm, &descriptors, UInt32(count), &events)
        if events & UInt16(POLLERR) != 0 {
            // An xrun or a suspend shows as an error on the descriptor; the state says which.
            let state = snd_pcm_state(pcm)
            try recover(pcm, state == SND_PCM_STATE_XRUN ? -EPIPE : state == SND_PCM_STATE_SUSPENDED ? -ESTRPIPE : -EIO)
        }
        return .room
    }

    /// Underruns and suspends are recovered and counted; anything else is a device failure.
    private func recover(_ pcm: OpaquePointer, _ code: Int32) throws {
        guard code == -EPIPE || code == -ESTRPIPE || code == -EINTR else { throw error("write", code) }
        if code == -EPIPE { underrunTotal.add(1, ordering: .relaxed) }
        let recovered = snd_pcm_recover(pcm, code, 1)
        if recovered < 0 { throw error("write", recovered) }
    }

    private func check(_ result: Int32, _ operation: String) throws {
        if result < 0 { throw error(operation, result) }
    }

    private func unsupported(_ format: AudioFormat, _ reason: String) -> AudioDeviceError {
        AudioDeviceError(code: .unsupportedFormat, device: deviceName, operation: "play \(format)", reason: reason,
                         hint: "use \"default\" or a plughw: device so ALSA converts the format")
    }

    private func error(_ operation: String, _ code: Int32) -> AudioDeviceError {
        Self.error(device: deviceName, operation: operation, code: code)
    }

    static func error(device: String, operation: String, code: Int32) -> AudioDeviceError {
        let reason = String(cString: snd_strerror(code))
        switch -code {
        case ENODEV where operation == "open" && (device.hasPrefix("hw:") || device.hasPrefix("plughw:")):
            // A hw:/plughw: name whose card is not there: usually a card name or number that
            // is wrong, or a USB device not plugged in.
            return AudioDeviceError(code: .notFound, device: device, operation: operation, reason: reason,
                                    hint: "check the name with `aplay -L` and use one it lists, such as plughw:CARD=Device,DEV=0; a USB device may not be plugged in yet")
        case ENOENT, ENXIO:
            return AudioDeviceError(code: .notFound, device: device, operation: operation, reason: reason,
                                    hint: "check the name with `aplay -L`; a USB device may not be plugged in yet")
        case ENODEV, EBADFD, EIO, ESHUTDOWN:
            return AudioDeviceError(code: .disconnected, device: device, operation: operation, reason: reason,
                                    hint: "the device was unplugged, powered off or reset")
        case EBUSY:
            return AudioDeviceError(code: .busy, device: device, operation: operation, reason: reason,
                                    hint: "another program is using it; stop that program, or use \"default\"/dmix so programs can share the card")
        case EACCES, EPERM:
            return AudioDeviceError(code: .permissionDenied, device: device, operation: operation, reason: reason,
                                    hint: "add the user to the \"audio\" group: sudo usermod -aG audio USER, then log in again")
        case ECONNREFUSED:
            return AudioDeviceError(code: .notFound, device: device, operation: operation, reason: reason,
                                    hint: "the sound server (PulseAudio or PipeWire) behind it is not running yet")
        case EINVAL:
            return AudioDeviceError(code: .unsupportedFormat, device: device, operation: operation, reason: reason,
                                    hint: "use \"default\" or a plughw: device so ALSA converts the format")
        default:
            return AudioDeviceError(code: .ioError, device: device, operation: operation, reason: reason)
        }
    }

    // MARK: - A device checked, and the devices there are

    /// Opens `device` for playback as `open` does (non-blocking, so a busy device answers at
    /// once) and closes it again. When it is not there, the answer carries the playback
    /// devices ALSA lists, as `aplay -L` shows them.
    public static func check(device: String) async -> DeviceCheck {
        await BlockingWorkQueue(label: "jukebox.alsa.check").run {
            var handle: OpaquePointer?
            var opened = snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
            if opened < 0 {
                // A PCM added to ~/.asoundrc since this process read ALSA's configuration is
                // found in a copy read afresh. Never by freeing the shared copy, as the sink
                // does once all its devices are closed: a device may be playing now (a reload).
                var top: OpaquePointer?, update: OpaquePointer?
                if snd_config_update_r(&top, &update, nil) >= 0, let top {
                    opened = snd_pcm_open_lconf(&handle, device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK, top)
                    // Closed before the copy it was opened from goes.
                    if opened >= 0, let opened = handle { snd_pcm_close(opened) }
                    handle = nil
                    snd_config_delete(top)
                }
                if let update { snd_config_update_free(update) }
            }
            if let handle { snd_pcm_close(handle) }
            if opened >= 0 { return .ok }
            let problem = error(device: device, operation: "open", code: opened)
            return DeviceCheck(problem: problem, known: problem.code == .notFound ? playbackDeviceNames() : [])
        }
    }

    /// The names of the PCMs that can play, as `aplay -L` lists them: those of sound cards
    /// (`CARD=`) first, then the rest (`default`, `pulse`, the user's own), leaving out the
    /// multichannel variants of each card and the converters that are no device of their own.
    static func playbackDeviceNames() -> [String] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) == 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        func text(_ hint: UnsafeMutableRawPointer, _ field: String) -> String? {
            guard let value = snd_device_name_get_hint(hint, field) else { return nil }
            defer { free(value) }
            return String(cString: value)
        }
        var names: [String] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let name = text(hint, "NAME"), text(hint, "IOID") != "Input" else { continue }
            let family = name.split(separator: ":", maxSplits: 1).first.map(String.init) ?? name
            guard !notDevices.contains(family), !names.contains(name) else { continue }
            names.append(name)
        }
        return names.filter { $0.contains("CARD=") } + names.filter { !$0.contains("CARD=") }
    }

    // MARK: - A client's device name

    /// Why a device name from a client may not be opened, or nil when it may
    /// (`ClientDeviceName`): it must be listed by ALSA (as `aplay -L` shows it) or be a plain
    /// card name, and its definition, followed through every PCM it reaches, must not write
    /// a file, run a program or load a library. Read from a copy of ALSA's configuration read
    /// afresh, as the open that follows reads it.
    public static func clientDeviceProblem(_ device: String) async -> String? {
        await BlockingWorkQueue(label: "jukebox.alsa.vet").run {
            guard !device.isEmpty, device.utf8.count <= ClientDeviceName.maxLength, !device.contains(where: { $0.isNewline || $0 == "\0" }) else {
                return "it is not a device name"
            }
            var top: OpaquePointer?, update: OpaquePointer?
            guard snd_config_update_r(&top, &update, nil) >= 0, let top else {
                if let update { snd_config_update_free(update) }
                return "ALSA's configuration could not be read"
            }
            defer {
                snd_config_delete(top)
                if let update { snd_config_update_free(update) }
            }
            guard ClientDeviceName.isPlainCardName(device) || allPlaybackNames().contains(device) else {
                return "only the devices `aplay -L` lists, or a card's hw:, plughw: or default: name, can be tested from a client"
            }
            return DefinitionWalk(top: top).problem(pcm: device, depth: 0)
        }
    }

    /// Every playback name ALSA lists, none left out.
    private static func allPlaybackNames() -> Set<String> {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) == 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var names: Set<String> = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let name = snd_device_name_get_hint(hint, "NAME") else { continue }
            defer { free(name) }
            if let direction = snd_device_name_get_hint(hint, "IOID") {
                defer { free(direction) }
                if String(cString: direction) == "Input" { continue }
            }
            names.insert(String(cString: name))
        }
        return names
    }

    /// Follows a PCM's definition (arguments expanded, as the open expands them) through
    /// each PCM and slave it names, inline or by name.
    private struct DefinitionWalk {
        let top: OpaquePointer
        /// Deeper than any real chain (plug → dmix → hw is 3); a loop ends here too.
        static let maxDepth = 16

        func problem(pcm name: String, depth: Int) -> String? {
            definition(of: name, base: "pcm", depth: depth)
        }

        private func definition(of name: String, base: String, depth: Int) -> String? {
            guard depth < Self.maxDepth else { return "its definition goes through more than \(Self.maxDepth) devices" }
            var found: OpaquePointer?
            // Not found, or arguments that do not fit: nothing is opened by it, and the open
            // that follows says why in its own words.
            guard snd_config_search_definition(top, base, name, &found) >= 0, let found else { return nil }
            defer { snd_config_delete(found) }
            return node(found, depth: depth)
        }

        private func node(_ config: OpaquePointer, depth: Int) -> String? {
            guard snd_config_get_type(config) == SND_CONFIG_TYPE_COMPOUND else { return nil }
            var iterator = snd_config_iterator_first(config)
            let end = snd_config_iterator_end(config)
            while iterator != end {
                defer { iterator = snd_config_iterator_next(iterator) }
                guard let child = snd_config_iterator_entry(iterator) else { continue }
                var idPointer: UnsafePointer<CChar>?
                guard snd_config_get_id(child, &idPointer) >= 0, let idPointer else { continue }
                let id = String(cString: idPointer)
                let text = string(child)
                if id == "lib" { return "its definition loads a library" }
                if id == "type", let text, ClientDeviceName.refusedTypes.contains(text) {
                    return "its definition writes to a file or runs a program (type \(text))"
                }
                if let text {
                    if id == "pcm", let problem = definition(of: text, base: "pcm", depth: depth + 1) { return problem }
                    if id == "slave", let problem = definition(of: text, base: "pcm_slave", depth: depth + 1) { return problem }
                } else if let problem = node(child, depth: depth + 1) {
                    return problem
                }
            }
            return nil
        }

        private func string(_ config: OpaquePointer) -> String? {
            guard snd_config_get_type(config) == SND_CONFIG_TYPE_STRING else { return nil }
            var value: UnsafePointer<CChar>?
            guard snd_config_get_string(config, &value) >= 0, let value else { return nil }
            return String(cString: value)
        }
    }

    /// What `aplay -L` lists that is never the device someone means: a card's surround
    /// variants, and alsa-plugins' converters and bridges.
    static let notDevices: Set<String> = [
        "front", "rear", "center_lfe", "side", "surround21", "surround40", "surround41", "surround50", "surround51", "surround71",
        "lavrate", "samplerate", "speexrate", "speex", "upmix", "vdownmix", "jack", "oss", "usbstream",
    ]

    static func alsaFormat(_ format: SampleFormat) -> snd_pcm_format_t {
        switch format {
        case .s16: SND_PCM_FORMAT_S16_LE
        case .s32: SND_PCM_FORMAT_S32_LE
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        }
    }

    // MARK: - libasound's own messages

    private static let libraryLogger = Mutex<Logger?>(nil)

    /// Sends the messages libasound would print on stderr to `logger` instead (at debug:
    /// the sink already reports each failure in one clear line of its own).
    public static func routeLibraryMessages(to logger: Logger) {
        libraryLogger.withLock { $0 = logger }
        jb_alsa_install_error_handler { file, line, function, _, message in
            var text = message.map { String(cString: $0) } ?? ""
            while text.last?.isNewline == true { text.removeLast() }
            let origin = function.map { String(cString: $0) } ?? (file.map { String(cString: $0) } ?? "alsa-lib")
            AlsaSink.libraryLogger.withLock { $0?.debug("alsa-lib: \(origin): \(text)") }
        }
    }
}
