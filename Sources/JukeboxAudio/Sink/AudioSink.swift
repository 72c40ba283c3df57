/// An audio output, shaped after MPD's output plugins (open, play, drain, cancel, close).
/// Implementations do their blocking work off Swift's cooperative pool and throw
/// `AudioDeviceError` for every device problem.
public protocol AudioSink: Sendable {
    /// The device as the user named it; every error message carries it.
    var deviceName: String { get }

    /// Opens the device for `format` and returns the format in use. Rate and channels always
    /// match the request; the sample format may differ when the device refuses the requested one.
    func open(_ format: AudioFormat) async throws -> AudioFormat

    /// Queues samples for playback; returns once the device has accepted them all. Throws
    /// `WriteInterrupted` if `interrupt()` ends a wait for room part-way through.
    func write(_ buffer: AudioBuffer) async throws

    /// Makes a write that is waiting for room in the device's buffer stop waiting at once
    /// (skip, pause, stop), so the player need not wait up to a period to notice. Callable
    /// from any thread. The next `rewind` or `cancel` clears it.
    func interrupt()

    /// Waits until everything written so far has been played.
    func drain() async throws

    /// Discards what is buffered but not yet played, so a stop is immediate. Returns how many
    /// frames were discarded, so a pause can resume exactly where the listener stopped hearing.
    @discardableResult
    func cancel() async -> Int

    /// Takes back up to `maxFrames` of the most recently written frames that the device has
    /// not played yet, leaving at least `keeping` frames queued ahead of the hardware so the
    /// next write joins on without a gap. Returns how many frames were taken back; 0 when the
    /// device cannot rewind. A fade-out written afterwards replaces the audio taken back.
    func rewind(upTo maxFrames: Int, keeping: Int) async -> Int

    /// Releases the device so other programs can use it.
    func close() async

    /// Underruns recovered since the sink was created (the device ran dry and was restarted).
    var underruns: Int { get }

    /// False when what was written can be neither discarded nor taken back (a pipe to a
    /// server): a cut then fades out over the audio that follows what was written.
    var canDiscard: Bool { get }

    /// How much audio the player hands over per write. Every write costs a hop to the sink's
    /// thread and back, and waking threads is most of what playing costs, so a sink asks for
    /// as much as it can take without the next block being late. A skip, pause, stop or
    /// volume change interrupts a write (`interrupt()`), so a long block delays none of them:
    /// a volume change is heard once the device has played what it already holds, or at once
    /// where the device can take that back (`rewind`).
    var blockDuration: Duration { get }

    /// The output is no longer used (a reload named another, or the daemon stops). A sink
    /// that holds its device or threads of its own between clips (the music bed) lets them
    /// go; `close()` only ends the clips' use of it.
    func retire() async

    /// Holds the device still, keeping what it holds, and lets it play on again: a music bed
    /// with nothing to play rests so. Returns false where the device cannot be held (the
    /// caller then keeps writing to it).
    func hold(_ held: Bool) async -> Bool
}

extension AudioSink {
    public var canDiscard: Bool { true }
    public func hold(_ held: Bool) async -> Bool { false }
    /// A quarter of a second: few hops, and a block is soon converted.
    public var blockDuration: Duration { .milliseconds(250) }
    public func retire() async {}
}
