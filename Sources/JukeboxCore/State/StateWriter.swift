/// Saves state so that many changes share one write. Each change is marked (`markChange()`)
/// once it is applied in memory; `save(through:)` returns once a write that gathered the state
/// after that mark has reached the disk. Under load, one fsync covers every change made while
/// the previous write was in progress, so "done" always means "durable" without one write
/// per request.
public actor StateWriter {
    public typealias Gather = @Sendable () async -> PersistedState

    private let file: StateFile
    private let gather: Gather
    private var marked: UInt64 = 0
    private var durable: UInt64 = 0
    private var waiting: [(mark: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var writing = false
    public private(set) var writes = 0
    /// How long each write took, to the disk and back (`/metrics`).
    public private(set) var writeTimes = Histogram(bounds: Histogram.stateWriteBounds)
    /// The largest state written since memory was last given back.
    private var largest = 0
    /// A state this much smaller than the largest since the last trim means a big queue was
    /// cleared or played: the memory it took is handed back to the system.
    static let trimThreshold = 1 << 20

    /// Where the events of saved changes wait for their write (see `EventBus`).
    private let events: EventBus?

    public init(file: StateFile, events: EventBus? = nil, gather: @escaping Gather) {
        self.file = file
        self.events = events
        self.gather = gather
    }

    /// Why nothing may be saved (the state file could not be read or moved aside), or nil.
    private var refusal: String?

    /// From now on every save fails with `reason`, so the file there is never overwritten.
    public func refuseSaves(reason: String) { refusal = reason }

    /// Why the last write failed, until one succeeds; or why saves are refused.
    public var problem: String? { refusal ?? lastFailure }
    private var lastFailure: String?

    /// Call right after a change is applied in memory; pass the result to `save(through:)`.
    public func markChange() -> UInt64 {
        marked += 1
        return marked
    }

    /// Returns once every change up to `mark` is on disk.
    public func save(through mark: UInt64) async throws {
        if let refusal { throw StateFileError(path: file.path, errno: 0, detail: refusal) }
        guard mark > durable else { return }
        try await withCheckedThrowingContinuation { continuation in
            waiting.append((mark, continuation))
            if !writing {
                writing = true
                Task { await self.writeWhileRequested() }
            }
        }
    }

    /// Marks a change and waits until it is on disk.
    public func save() async throws {
        try await save(through: markChange())
    }

    private func writeWhileRequested() async {
        while !waiting.isEmpty {
            // Everything marked so far was applied before this gather, so it is in the snapshot.
            let target = marked
            // Likewise every event published so far: its change is in the snapshot.
            let published = events?.mark()
            let state = await gather()
            do {
                let began = ContinuousClock.now
                let size = try await file.save(state)
                writeTimes.observe((ContinuousClock.now - began).secondsDouble)
                writes += 1
                largest = max(largest, size)
                if largest - size >= Self.trimThreshold {
                    // glibc keeps freed memory for reuse; a storm of 10 000 entries, cleared,
                    // would otherwise leave the daemon three times its idle size for good.
                    ReleaseMemory.now()
                    largest = size
                }
                durable = max(durable, target)
                lastFailure = nil
                if let published { events?.release(through: published) }
                let done = waiting.filter { $0.mark <= durable }
                waiting.removeAll { $0.mark <= durable }
                done.forEach { $0.continuation.resume() }
            } catch {
                lastFailure = "\(error)"
                let failed = waiting
                waiting = []
                failed.forEach { $0.continuation.resume(throwing: error) }
            }
        }
        writing = false
    }
}
