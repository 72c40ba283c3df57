import CALSA
import Glibc
import JukeboxCore
import Logging
import Synchronization

/// Plays through an ALSA PCM (`default`, `plughw:1,0`, `dmix`, a `file:` PCM in tests…).
/// This is the only file that imports ALSA.
///
/// Each sink owns one serial thread (`BlockingWorkQueue`) for every libasound call, since
/// `snd_pcm_writei` and `snd_pcm_drain` block for as long as the audio takes to play.
/// The PCM is opened non-blocking so a busy device fails at once instead of hanging, and
/// writes wait with a timeout so an unplugged or wedged device is reported, not waited on.
public final class AlsaSink: AudioSink, @unchecked Sendable {
    // @unchecked: `pcm` and `underruns` are only read and written on `queue`.
    public let deviceName: String
    private let queue: BlockingWorkQueue
    private let bufferMicroseconds: UInt32
    private let periodMicroseconds: UInt32
    private var pcm: OpaquePointer?
    private var frameBytes = 4
    private var underruns = 0

    public init(device: String, bufferTime: Duration = .milliseconds(500), periodTime: Duration = .milliseconds(50)) {
        self.deviceName = device
        self.queue = BlockingWorkQueue(label: "jukebox.alsa")
        self.bufferMicroseconds = UInt32(bufferTime.milliseconds * 1000)
        self.periodMicroseconds = UInt32(periodTime.milliseconds * 1000)
    }

    deinit {
        if let pcm { snd_pcm_close(pcm) }
    }

    public func underrunCount() async -> Int {
        await queue.run { self.underruns }
    }

    public func open(_ format: AudioFormat) async throws -> AudioFormat {
        try await queue.run { try self.openBlocking(format) }
    }

    public func write(_ buffer: AudioBuffer) async throws {
        try await queue.run { try self.writeBlocking(buffer) }
    }

    public func drain() async throws {
        try await queue.run {
            guard let pcm = self.pcm else { return }
            // Draining waits for the device, so switch to blocking mode for just this call.
            snd_pcm_nonblock(pcm, 0)
            let result = snd_pcm_drain(pcm)
            snd_pcm_nonblock(pcm, 1)
            if result < 0, result != -EPIPE { throw self.error("drain", result) }
            let prepared = snd_pcm_prepare(pcm)
            if prepared < 0 { throw self.error("prepare", prepared) }
        }
    }

    public func cancel() async -> Int {
        await queue.run {
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
            guard let pcm = self.pcm else { return 0 }
            // snd_pcm_rewindable counts only frames the hardware has not fetched yet; some
            // plugins (pulse, for one) report 0 because the data has already left the process.
            let rewindable = snd_pcm_rewindable(pcm)
            let wanted = min(maxFrames, Int(rewindable) - keeping)
            guard rewindable > 0, wanted > 0 else { return 0 }
            let taken = snd_pcm_rewind(pcm, snd_pcm_uframes_t(wanted))
            return max(0, Int(taken))
        }
    }

    public func heartbeat() async {
        await queue.run {}
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
        var handle: OpaquePointer?
        let opened = snd_pcm_open(&handle, deviceName, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard opened >= 0, let handle else { throw error("open", opened) }
        do {
            let sampleFormat = try configure(handle, format)
            pcm = handle
            frameBytes = sampleFormat.bytesPerSample * format.channels
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
            throw unsupported("no sample format this player produces (s16, s32, float) is accepted")
        }
        try check(snd_pcm_hw_params_set_format(pcm, hw, Self.alsaFormat(chosen)), "set sample format \(chosen)")
        if snd_pcm_hw_params_set_channels(pcm, hw, UInt32(format.channels)) < 0 {
            throw unsupported("it cannot play \(format.channels) channel(s)")
        }
        snd_pcm_hw_params_set_rate_resample(pcm, hw, 1)
        var rate = UInt32(format.sampleRate)
        var direction: Int32 = 0
        if snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &direction) < 0 || rate != UInt32(format.sampleRate) {
            throw unsupported("it cannot play at \(format.sampleRate) Hz")
        }
        var bufferTime = bufferMicroseconds, periodTime = periodMicroseconds
        snd_pcm_hw_params_set_buffer_time_near(pcm, hw, &bufferTime, &direction)
        snd_pcm_hw_params_set_period_time_near(pcm, hw, &periodTime, &direction)
        try check(snd_pcm_hw_params(pcm, hw), "apply the hardware parameters")

        var bufferSize: snd_pcm_uframes_t = 0, periodSize: snd_pcm_uframes_t = 0
        snd_pcm_hw_params_get_buffer_size(hw, &bufferSize)
        snd_pcm_hw_params_get_period_size(hw, &periodSize, &direction)
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
                    let ready = snd_pcm_wait(pcm, 1000)
                    if ready == 0 {
                        silentWaits += 1
                        if silentWaits >= 3 {
                            throw AudioDeviceError(code: .stalled, device: deviceName, operation: "write",
                                                   reason: "the device accepted no audio for 3 s", hint: "is it still connected and powered?")
                        }
                    } else if ready < 0 {
                        try recover(pcm, Int32(ready))
                    }
                } else {
                    try recover(pcm, Int32(result))
                }
            }
        }
    }

    /// Underruns and suspends are recovered and counted; anything else is a device failure.
    private func recover(_ pcm: OpaquePointer, _ code: Int32) throws {
        guard code == -EPIPE || code == -ESTRPIPE || code == -EINTR else { throw error("write", code) }
        if code == -EPIPE { underruns += 1 }
        let recovered = snd_pcm_recover(pcm, code, 1)
        if recovered < 0 { throw error("write", recovered) }
    }

    private func check(_ result: Int32, _ operation: String) throws {
        if result < 0 { throw error(operation, result) }
    }

    private func unsupported(_ reason: String) -> AudioDeviceError {
        AudioDeviceError(code: .unsupportedFormat, device: deviceName, operation: "configure", reason: reason,
                         hint: "use \"default\" or a plughw: device so ALSA converts the format")
    }

    private func error(_ operation: String, _ code: Int32) -> AudioDeviceError {
        Self.error(device: deviceName, operation: operation, code: code)
    }

    static func error(device: String, operation: String, code: Int32) -> AudioDeviceError {
        let reason = String(cString: snd_strerror(code))
        switch -code {
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
        case EINVAL:
            return AudioDeviceError(code: .unsupportedFormat, device: device, operation: operation, reason: reason,
                                    hint: "use \"default\" or a plughw: device so ALSA converts the format")
        default:
            return AudioDeviceError(code: .ioError, device: device, operation: operation, reason: reason)
        }
    }

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
            let text = message.map { String(cString: $0) } ?? ""
            let origin = function.map { String(cString: $0) } ?? (file.map { String(cString: $0) } ?? "alsa-lib")
            AlsaSink.libraryLogger.withLock { $0?.debug("alsa-lib: \(origin): \(text)") }
        }
    }
}
