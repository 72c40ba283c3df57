import ESPHomeAPI
import JukeboxCore
import Logging
import Synchronization

/// One connection's media requests, taken in order: `play_media` addresses and announcements
/// are fetched one after another, so they queue in the order Home Assistant sent them, while
/// the connection goes on reading its other messages. At most `limit` wait or are under way;
/// more are refused (an announcement is then answered as failed at once).
final class MediaWork: Sendable {
    enum Job: Sendable {
        case play(address: String, announce: Bool)
        case announce(ESPVoiceAssistantAnnounceRequest)
    }

    let limit: Int
    private let count = Mutex(0)
    private let jobs: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    init(limit: Int) {
        self.limit = limit
        (jobs, continuation) = AsyncStream.makeStream(of: Job.self)
    }

    /// False when `limit` jobs are under way already.
    func add(_ job: Job) -> Bool {
        let admitted = count.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        if admitted { continuation.yield(job) }
        return admitted
    }

    /// Runs the jobs until `finish()`, and those already asked for after it: `perform` fetches
    /// and queues one, and returns what is left to wait for (an announcement's end), which
    /// runs beside the next and is given up once the connection is gone.
    func run(_ perform: @escaping @Sendable (Job) async -> (@Sendable () async -> Void)?) async {
        await withDiscardingTaskGroup { group in
            defer { group.cancelAll() }
            for await job in jobs {
                guard let rest = await perform(job) else {
                    done()
                    continue
                }
                group.addTask {
                    await rest()
                    self.done()
                }
            }
        }
    }

    func finish() { continuation.finish() }

    private func done() { count.withLock { $0 -= 1 } }
}
