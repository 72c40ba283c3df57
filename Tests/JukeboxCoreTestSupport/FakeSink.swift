import JukeboxCore
import Synchronization

/// Records what a player asks of an audio device. Each write is tagged with the first sample
/// of its block, which `FakeDecoder` sets to the clip's tag, so tests can see which clip every
/// block came from and in what order. Writes yield a few times so that two concurrent writers
/// would visibly interleave.
public actor FakeSink: AudioSink {
    public enum Event: Sendable, Equatable, CustomStringConvertible {
        case open(AudioFormat)
        case write(tag: Int, frames: Int)
        case drain
        case cancel
        case close
        /// Written by test hooks (e.g. `beforePlaying`) to place their own steps in the timeline.
        case mark(String)

        public var description: String {
            switch self {
            case .open(let format): "open(\(format))"
            case .write(let tag, let frames): "write(\(tag)×\(frames))"
            case .drain: "drain"
            case .cancel: "cancel"
            case .close: "close"
            case .mark(let text): text
            }
        }
    }

    public nonisolated let deviceName: String
    /// Short blocks (64 frames at the fixtures' 1 kHz), so tests can act between a clip's blocks.
    public nonisolated var blockDuration: Duration { .milliseconds(50) }

    public init(deviceName: String = "fake") { self.deviceName = deviceName }
    public nonisolated var underruns: Int { 0 }
    /// How many times the player asked a waiting write to stop waiting.
    public nonisolated let interrupts = Atomic<Int>(0)
    public nonisolated func interrupt() { interrupts.add(1, ordering: .relaxed) }
    /// The fake holds nothing back that it could hand back.
    public func rewind(upTo maxFrames: Int, keeping: Int) async -> Int { 0 }
    public private(set) var events: [Event] = []
    private var openFailures: [AudioDeviceError] = []
    private var writeFailures: [Int: AudioDeviceError] = [:]
    private var writeCount = 0
    private var waiters: [(predicate: @Sendable ([Event]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    /// When set, the sample formats the "device" accepts; others are negotiated to the first.
    public var acceptedFormats: [SampleFormat]?
    /// When set, every write waits for the test to release it, so a test can act mid-clip.
    private var writeGate: [CheckedContinuation<Void, Never>] = []
    private var gated = false

    private var drainFailures: [AudioDeviceError] = []

    public func failOpens(_ errors: [AudioDeviceError]) { openFailures = errors }
    public func failDrains(_ errors: [AudioDeviceError]) { drainFailures = errors }
    /// When set, drains wait for `releaseDrains()`, so a test can act while a tail plays out.
    private var drainsHeld = false
    private var heldDrains: [CheckedContinuation<Void, Never>] = []
    public func holdDrains() { drainsHeld = true }
    public func releaseDrains() {
        drainsHeld = false
        heldDrains.forEach { $0.resume() }
        heldDrains = []
    }
    /// Makes write number `index` (counting from 0 over the sink's life) fail with `error`.
    public func failWrite(at index: Int, with error: AudioDeviceError) { writeFailures[index] = error }
    public func mark(_ text: String) { record(.mark(text)) }
    public func accept(_ formats: [SampleFormat]) { acceptedFormats = formats }

    public func gateWrites(_ on: Bool) {
        gated = on
        if !on { writeGate.forEach { $0.resume() }; writeGate = [] }
    }

    /// Lets one gated write through.
    public func releaseOneWrite() { if !writeGate.isEmpty { writeGate.removeFirst().resume() } }

    /// With writes gated: lets `count` writes through, one at a time, and returns once the
    /// next is held.
    public func letWritesThrough(_ count: Int) async {
        for _ in 0..<count {
            await waitForGatedWrite()
            releaseOneWrite()
        }
        await waitForGatedWrite()
    }
    public var gatedWriteCount: Int { writeGate.count }
    private var gateWaiters: [CheckedContinuation<Void, Never>] = []

    /// Returns once a write is being held at the gate (a clip is mid-play).
    public func waitForGatedWrite() async {
        if !writeGate.isEmpty { return }
        await withCheckedContinuation { gateWaiters.append($0) }
    }

    public func open(_ format: AudioFormat) async throws -> AudioFormat {
        if !openFailures.isEmpty { throw openFailures.removeFirst() }
        record(.open(format))
        if let acceptedFormats, !acceptedFormats.contains(format.sampleFormat) {
            return AudioFormat(sampleFormat: acceptedFormats[0], sampleRate: format.sampleRate, channels: format.channels)
        }
        return format
    }

    public func write(_ buffer: AudioBuffer) async throws {
        if gated {
            await withCheckedContinuation {
                writeGate.append($0)
                gateWaiters.forEach { $0.resume() }
                gateWaiters = []
            }
        }
        defer { writeCount += 1 }
        if let failure = writeFailures.removeValue(forKey: writeCount) { throw failure }
        for _ in 0..<3 { await Task.yield() }
        let tag: Int = switch buffer.samples {
        case .s16(let samples): Int(samples.first ?? 0)
        case .s32(let samples): Int(samples.first ?? 0)
        case .float32(let samples): Int(samples.first ?? 0)
        }
        record(.write(tag: tag, frames: buffer.frames))
    }

    public func drain() async throws {
        record(.drain)
        if drainsHeld { await withCheckedContinuation { heldDrains.append($0) } }
        if !drainFailures.isEmpty { throw drainFailures.removeFirst() }
    }
    /// Frames the fake "device" reports as written but not yet played when cancelled.
    public var unplayedOnCancel = 0
    public func setUnplayedOnCancel(_ frames: Int) { unplayedOnCancel = frames }

    public func cancel() async -> Int {
        record(.cancel)
        return unplayedOnCancel
    }
    public func close() async { record(.close) }

    /// Returns once the recorded events satisfy `predicate`.
    public func wait(until predicate: @escaping @Sendable ([Event]) -> Bool) async {
        if predicate(events) { return }
        await withCheckedContinuation { waiters.append((predicate, $0)) }
    }

    /// The order clips were written in, one entry per uninterrupted run of blocks.
    public var writeRuns: [Int] {
        var runs: [Int] = []
        for case .write(let tag, _) in events where runs.last != tag { runs.append(tag) }
        return runs
    }

    public func framesWritten(tag: Int) -> Int { events.frames(tag: tag) }

    private func record(_ event: Event) {
        events.append(event)
        notify()
    }

    private func notify() {
        let ready = waiters.filter { $0.predicate(events) }
        waiters.removeAll { $0.predicate(events) }
        ready.forEach { $0.continuation.resume() }
    }
}

extension Sequence where Element == FakeSink.Event {
    /// Frames written for the clip whose samples carry `tag`.
    public func frames(tag: Int) -> Int {
        reduce(0) { total, event in
            if case .write(tag, let frames) = event { return total + frames }
            return total
        }
    }
}
