import JukeboxAudio
import Synchronization

/// A device the test paces: each write waits for a permit (`advance`), then is recorded as
/// float samples. Between two advances the mixer is held with its next block ready, so a
/// test knows exactly which block saw what.
final class SteppedDevice: AudioSink, @unchecked Sendable {
    // @unchecked: the mutable state is a Mutex.
    let deviceName = "stepped"
    private struct State {
        var permits = 0
        var recorded: [Float] = []
        var blocks = 0
        var waiter: CheckedContinuation<Void, Never>?
        var watchers: [(blocks: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var openFailure: AudioDeviceError?
        var opened: AudioFormat?
        var interrupted = false
    }
    private let state = Mutex(State())
    /// The sample format the device takes.
    let sampleFormat: SampleFormat

    init(sampleFormat: SampleFormat = .s16, openFailure: AudioDeviceError? = nil, holdable: Bool = true) {
        self.sampleFormat = sampleFormat
        self.holdable = holdable
        (holds, holdsTold) = AsyncStream.makeStream()
        state.withLock { $0.openFailure = openFailure }
    }

    var underruns: Int { 0 }
    /// Ends a write waiting for its permit, as a real device's interrupt ends a wait for room.
    func interrupt() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.interrupted = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
    var samples: [Float] { state.withLock { $0.recorded } }
    var opened: AudioFormat? { state.withLock { $0.opened } }

    func failOpens(_ error: AudioDeviceError?) { state.withLock { $0.openFailure = error } }

    func open(_ format: AudioFormat) async throws -> AudioFormat {
        try state.withLock { state throws(AudioDeviceError) -> AudioFormat in
            if let failure = state.openFailure { throw failure }
            state.opened = AudioFormat(sampleFormat: sampleFormat, sampleRate: format.sampleRate, channels: format.channels)
            return state.opened!
        }
    }

    func write(_ buffer: AudioBuffer) async throws {
        await withCheckedContinuation { continuation in
            let (now, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                if state.interrupted { return (true, []) }
                if state.permits > 0 { state.permits -= 1; return (true, []) }
                state.waiter = continuation
                // Held with its next block made: what a test waits for.
                let blocks = state.blocks
                let ready = state.watchers.filter { $0.blocks <= blocks }.map(\.continuation)
                state.watchers.removeAll { $0.blocks <= blocks }
                return (false, ready)
            }
            for watcher in ready { watcher.resume() }
            if now { continuation.resume() }
        }
        try state.withLock { state in
            if state.interrupted {
                state.interrupted = false
                throw WriteInterrupted(framesWritten: 0)
            }
            state.recorded += SampleMath.floats(buffer)
            state.blocks += 1
        }
    }

    /// Lets `count` more blocks through, and returns once they are recorded and the mixer
    /// is held again with its next block made.
    func advance(_ count: Int = 1) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            allow(count, thenTell: done)
        }
    }

    /// Each `hold` the mixer asked for, in order, as it asks; and whether the device can be held.
    let holds: AsyncStream<Bool>
    private let holdsTold: AsyncStream<Bool>.Continuation
    let holdable: Bool

    func hold(_ held: Bool) async -> Bool {
        guard holdable else { return false }
        holdsTold.yield(held)
        return true
    }

    /// Lets `count` more blocks through without waiting for them (`done`, if given, is told
    /// once they are written and the mixer is held again).
    func allow(_ count: Int, thenTell done: CheckedContinuation<Void, Never>? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let done { state.watchers.append((state.blocks + count, done)) }
            state.permits += count
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.permits -= 1
            return waiter
        }
        waiter?.resume()
    }

    /// Permits not yet used: blocks the mixer could have written and did not.
    var permitsLeft: Int { state.withLock { $0.permits } }

    func drain() async throws {}
    func cancel() async -> Int { 0 }
    func rewind(upTo maxFrames: Int, keeping: Int) async -> Int { 0 }
    func close() async { state.withLock { $0.opened = nil } }
}
