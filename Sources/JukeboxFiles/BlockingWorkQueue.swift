import Dispatch

/// A serial thread for blocking C calls (ALSA writes, libsndfile reads). Swift's cooperative
/// pool has as many threads as cores — two on these machines — so a blocking call there would
/// stall every other task; work submitted here runs on its own serial dispatch queue and
/// resumes the caller through a continuation.
public struct BlockingWorkQueue: Sendable {
    private let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result(catching: work)) }
        }
    }

    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}
