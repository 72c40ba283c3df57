import Synchronization

/// Wraps an output and notes when each of its calls began, so the watchdog can tell a
/// device stuck in a driver call (the daemon then needs a restart) from one that is merely
/// busy. Every output gets it, whatever it is, so no output has watchdog code of its own.
public final class WatchedSink: AudioSink {
    public let output: any AudioSink
    private let calls = Mutex<(next: Int, started: [Int: ContinuousClock.Instant])>((0, [:]))

    public init(_ output: any AudioSink) { self.output = output }

    /// How long the oldest call still running has been running; nil when none is.
    public func longestCall(now: ContinuousClock.Instant = .now) -> Duration? {
        calls.withLock { $0.started.values.min() }.map { now - $0 }
    }

    private func watching<T>(_ body: () async throws -> T) async rethrows -> T {
        let id = calls.withLock { calls in
            calls.next += 1
            calls.started[calls.next] = .now
            return calls.next
        }
        defer { _ = calls.withLock { $0.started.removeValue(forKey: id) } }
        return try await body()
    }

    public var deviceName: String { output.deviceName }
    public var underruns: Int { output.underruns }
    public var canDiscard: Bool { output.canDiscard }
    public var blockDuration: Duration { output.blockDuration }
    public func interrupt() { output.interrupt() }
    public func retire() async { await output.retire() }
    public func open(_ format: AudioFormat) async throws -> AudioFormat { try await watching { try await output.open(format) } }
    public func write(_ buffer: AudioBuffer) async throws { try await watching { try await output.write(buffer) } }
    public func drain() async throws { try await watching { try await output.drain() } }
    @discardableResult public func cancel() async -> Int { await watching { await output.cancel() } }
    public func rewind(upTo maxFrames: Int, keeping: Int) async -> Int { await watching { await output.rewind(upTo: maxFrames, keeping: keeping) } }
    public func close() async { await watching { await output.close() } }
    public func hold(_ held: Bool) async -> Bool { await watching { await output.hold(held) } }
}
