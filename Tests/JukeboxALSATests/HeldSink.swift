import JukeboxCore

/// Passes everything to a real sink, but holds the write numbered `holdAt` (from 0) until
/// the test releases it, so a test can skip or pause at a known point mid-clip even though
/// the `file` plugin takes audio as fast as it is written.
actor HeldSink: AudioSink {
    nonisolated let base: any AudioSink
    nonisolated var deviceName: String { base.deviceName }
    nonisolated var underruns: Int { base.underruns }
    nonisolated var blockDuration: Duration { base.blockDuration }
    nonisolated func interrupt() { base.interrupt() }
    private let holdAt: Int
    private var writes = 0
    private var held: CheckedContinuation<Void, Never>?
    private var arrived: CheckedContinuation<Void, Never>?
    private var hasArrived = false

    init(_ base: any AudioSink, holdAt: Int) {
        self.base = base
        self.holdAt = holdAt
    }

    /// Returns once the held write is waiting.
    func waitUntilHeld() async {
        if hasArrived { return }
        await withCheckedContinuation { arrived = $0 }
    }

    func release() {
        held?.resume()
        held = nil
    }

    func write(_ buffer: AudioBuffer) async throws {
        defer { writes += 1 }
        if writes == holdAt {
            await withCheckedContinuation { continuation in
                held = continuation
                hasArrived = true
                arrived?.resume()
                arrived = nil
            }
        }
        try await base.write(buffer)
    }

    func open(_ format: AudioFormat) async throws -> AudioFormat { try await base.open(format) }
    private var drains = 0
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []

    /// Returns once the player has drained the device (after a pause's fade-out, say).
    func waitForDrain() async {
        if drains > 0 { return }
        await withCheckedContinuation { drainWaiters.append($0) }
    }

    func drain() async throws {
        try await base.drain()
        drains += 1
        drainWaiters.forEach { $0.resume() }
        drainWaiters = []
    }
    func cancel() async -> Int { await base.cancel() }
    func rewind(upTo maxFrames: Int, keeping: Int) async -> Int { await base.rewind(upTo: maxFrames, keeping: keeping) }
    func close() async { await base.close() }
}
