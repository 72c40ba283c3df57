import Synchronization

/// The one conversion stage, wrapped around every output as MPD's `FilteredAudioOutput` wraps
/// its outputs: the player opens it with the clip's own format, and it hands the output what
/// the output opened with. An ALSA device may refuse the sample format (to s16, s32 or
/// float); a Snapcast stream has a fixed rate and channel count (channels mapped, the rate
/// converted). Frame counts the output gives back (an interrupted write, a rewind, a cancel)
/// are in its own frames, and are turned back into the clip's.
///
/// Conversion is plain arithmetic on the caller's task; the output's own thread does only
/// the output's I/O.
public final class ConvertingSink: AudioSink {
    public let output: any AudioSink
    private let makeRateConverter: RateConverterFactory?
    private let state = Mutex<State>(State())

    /// What the clip is opened with and what the output took, with the rate converter when
    /// their rates differ. Touched by one caller at a time (the player), behind a lock only
    /// so the type is `Sendable`.
    private struct State: ~Copyable {
        var input: AudioFormat?
        var device: AudioFormat?
        var rates: (any RateConverter)?
    }

    /// `makeRateConverter`: for outputs with a fixed rate; without it, a clip at another
    /// rate is refused as an unsupported format.
    public init(_ output: any AudioSink, makeRateConverter: RateConverterFactory? = nil) {
        self.output = output
        self.makeRateConverter = makeRateConverter
    }

    /// The format the output took for the clip playing now (nil while closed).
    public var deviceFormat: AudioFormat? { state.withLock { $0.device } }

    public var deviceName: String { output.deviceName }
    public var underruns: Int { output.underruns }
    public var canDiscard: Bool { output.canDiscard }
    public var blockDuration: Duration { output.blockDuration }
    public func interrupt() { output.interrupt() }
    public func retire() async { await output.retire() }

    /// Opens the output and returns `requested`: from here on, blocks come in the clip's
    /// format, whatever the output took.
    public func open(_ requested: AudioFormat) async throws -> AudioFormat {
        let device = try await output.open(requested)
        if device.sampleRate != requested.sampleRate, makeRateConverter == nil {
            await output.close()
            throw AudioDeviceError(
                code: .unsupportedFormat, device: deviceName, operation: "play \(requested)",
                reason: "it plays at \(device.sampleRate) Hz only, and nothing here converts the rate")
        }
        let made = state.withLock { state -> String? in
            state.input = requested
            state.device = device
            state.rates = nil
            guard device.sampleRate != requested.sampleRate, let makeRateConverter else { return nil }
            do {
                state.rates = try makeRateConverter(requested.sampleRate, device.sampleRate, device.channels)
                return nil
            } catch {
                state.input = nil
                state.device = nil
                return "\(error)"
            }
        }
        if let problem = made {
            await output.close()
            throw AudioDeviceError(code: .unsupportedFormat, device: deviceName, operation: "play \(requested)", reason: problem)
        }
        return requested
    }

    public func write(_ buffer: AudioBuffer) async throws {
        let (converted, ratio) = state.withLock { state -> (AudioBuffer, (input: Int, device: Int)?) in
            guard let input = state.input, let device = state.device else { return (buffer, nil) }
            return (Self.convert(buffer, from: input, to: device, rates: state.rates), (input.sampleRate, device.sampleRate))
        }
        do {
            try await output.write(converted)
        } catch let interrupted as WriteInterrupted {
            guard let ratio else { throw interrupted }
            throw WriteInterrupted(framesWritten: min(buffer.frames, interrupted.framesWritten * ratio.input / max(ratio.device, 1)))
        }
    }

    /// What the rate converter still holds goes to the output (the end of the clip), then
    /// the output plays out.
    public func drain() async throws {
        let tail = state.withLock { state -> AudioBuffer? in
            guard let rates = state.rates, let device = state.device else { return nil }
            let samples = rates.flush()
            guard !samples.isEmpty else { return nil }
            return SampleMath.convert(AudioBuffer(samples: .float32(samples), channels: device.channels), to: device.sampleFormat)
        }
        // The tail of a clip already heard in full: an interruption now has nothing to cut.
        if let tail { do { try await output.write(tail) } catch is WriteInterrupted {} }
        try await output.drain()
    }

    @discardableResult
    public func cancel() async -> Int { toInputFrames(await output.cancel()) }

    public func rewind(upTo maxFrames: Int, keeping: Int) async -> Int {
        let (device, input) = state.withLock { ($0.device?.sampleRate ?? 1, $0.input?.sampleRate ?? 1) }
        guard device != input else { return await output.rewind(upTo: maxFrames, keeping: keeping) }
        // `maxFrames` may be `.max` (all of it): scaled without overflowing.
        func scaled(_ frames: Int) -> Int {
            let (product, overflow) = frames.multipliedReportingOverflow(by: device)
            return overflow ? .max : product / max(input, 1)
        }
        return toInputFrames(await output.rewind(upTo: scaled(maxFrames), keeping: scaled(keeping)))
    }

    public func close() async {
        state.withLock { state in
            state.input = nil
            state.device = nil
            state.rates = nil
        }
        await output.close()
    }

    private func toInputFrames(_ deviceFrames: Int) -> Int {
        state.withLock { state in
            guard let input = state.input, let device = state.device, input.sampleRate != device.sampleRate else { return deviceFrames }
            return deviceFrames * input.sampleRate / max(device.sampleRate, 1)
        }
    }

    /// `buffer`, in `input`'s format, as `device` takes it. Only the sample format differs:
    /// converted sample by sample (bit-exact where it can be). Channels or rate differ: by
    /// way of float samples.
    static func convert(_ buffer: AudioBuffer, from input: AudioFormat, to device: AudioFormat, rates: (any RateConverter)?) -> AudioBuffer {
        if input.channels == device.channels, rates == nil {
            return SampleMath.convert(buffer, to: device.sampleFormat)
        }
        var samples = SampleMath.mapChannels(SampleMath.floats(buffer), from: buffer.channels, to: device.channels)
        if let rates { samples = rates.process(samples) }
        return SampleMath.convert(AudioBuffer(samples: .float32(samples), channels: device.channels), to: device.sampleFormat)
    }
}
