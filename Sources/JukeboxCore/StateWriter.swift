/// Saves state so that many changes arriving together share one write. A caller returns once
/// a write that started after its change was made has reached the disk, so "done" always means
/// "durable"; under load, one fsync covers every request that came in meanwhile.
public actor StateWriter {
    public typealias Gather = @Sendable () async -> PersistedState

    private let file: StateFile
    private let gather: Gather
    private var waiting: [CheckedContinuation<Void, any Error>] = []
    private var writing = false
    public private(set) var writes = 0

    public init(file: StateFile, gather: @escaping Gather) {
        self.file = file
        self.gather = gather
    }

    /// Returns once the current in-memory state (including the caller's change) is on disk.
    public func save() async throws {
        try await withCheckedThrowingContinuation { continuation in
            waiting.append(continuation)
            if !writing {
                writing = true
                Task { await self.writeWhileRequested() }
            }
        }
    }

    private func writeWhileRequested() async {
        while !waiting.isEmpty {
            let batch = waiting
            waiting = []
            let state = await gather()
            do {
                try await file.save(state)
                writes += 1
                batch.forEach { $0.resume() }
            } catch {
                batch.forEach { $0.resume(throwing: error) }
            }
        }
        writing = false
    }
}
