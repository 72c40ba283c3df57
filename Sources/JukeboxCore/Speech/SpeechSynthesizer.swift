import DequeModule
import Logging

/// Turns announcement texts into audio with the session's speech engine (`SpeechSettings`),
/// one at a time on a thread of its own, and keeps the results in a `SpeechCache`. An
/// announcement's audio is started as soon as it is queued (`prepare`), so it is usually
/// ready by its turn; the queue then asks for it (`audio(for:)`), which waits for it or has it
/// made first, ahead of the others.
public actor SpeechSynthesizer {
    /// Texts waiting to be made ahead of their turn beyond this are made at their turn.
    public static let maxPending = 32

    private var settings: SpeechSettings
    public nonisolated let cache: SpeechCache
    private let decoder: any ClipDecoder
    private let logger: Logger
    /// The engine runs here: a run can block for its whole time limit.
    private let engine = BlockingWorkQueue(label: "jukebox.speech")
    /// Cache look-ups run here, so a hit never waits behind the engine.
    private let files = BlockingWorkQueue(label: "jukebox.speech.cache")

    private struct Job: Equatable {
        var text: String
        var path: String
        var settings: SpeechSettings
    }
    private var pending = Deque<Job>()
    private var running: String?
    /// Who waits for which file, by a number of their own so one can give up.
    private var waiters: [String: [Int: CheckedContinuation<Result<String, SpeechFailure>, Never>]] = [:]
    private var nextWaiter = 0
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    public init(settings: SpeechSettings, cache: SpeechCache, decoder: any ClipDecoder, logger: Logger) {
        self.settings = settings
        self.cache = cache
        self.decoder = decoder
        self.logger = logger
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// How many texts wait to be made.
    var pendingCount: Int { pending.count }

    /// A reload or an edit brings a new engine; it is used from the next text made.
    public func configure(_ settings: SpeechSettings) { self.settings = settings }

    /// Starts making `text`'s audio in the background, if it is not cached or on its way.
    public func prepare(_ text: String) {
        let job = Job(text: text, path: cache.path(for: text, command: settings.command), settings: settings)
        guard running != job.path, !pending.contains(where: { $0.path == job.path }), pending.count < Self.maxPending else { return }
        pending.append(job)
        wake.yield()
    }

    /// The announcement with its audio, made now if it is not cached. Cancelling the caller
    /// (a skip) stops the wait; the engine finishes its run for the cache.
    public func audio(for clip: PlayableClip) async throws(SpeechFailure) -> PlayableClip {
        guard let text = clip.speech else { return clip }
        let job = Job(text: text, path: cache.path(for: text, command: settings.command), settings: settings)
        var made = clip
        made.source = ClipSource(file: clip.source.file, path: job.path, within: cache.folder)
        let cache = cache
        if await files.run({ cache.hit(job.path) }) { return made }
        // Needed now: first in line, unless it is being made already.
        if running != job.path {
            pending.removeAll { $0.path == job.path }
            pending.prepend(job)
            wake.yield()
        }
        let id = nextWaiter
        nextWaiter += 1
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, SpeechFailure>, Never>) in
                if Task.isCancelled {
                    continuation.resume(returning: .failure(SpeechFailure.cancelled))
                } else {
                    waiters[job.path, default: [:]][id] = continuation
                }
            }
        } onCancel: {
            Task { await self.giveUp(id, path: job.path) }
        }
        switch result {
        case .success: return made
        case .failure(let failure): throw failure
        }
    }

    private func giveUp(_ id: Int, path: String) {
        waiters[path]?.removeValue(forKey: id)?.resume(returning: .failure(.cancelled))
    }

    /// Makes the texts in line, one at a time, until cancelled.
    public func run() async {
        for await _ in wakeups {
            while let job = pending.popFirst(), !Task.isCancelled {
                running = job.path
                let result = await make(job)
                running = nil
                for waiter in (waiters.removeValue(forKey: job.path) ?? [:]).values { waiter.resume(returning: result) }
            }
            if Task.isCancelled { break }
        }
        for waiter in waiters.values.flatMap(\.values) { waiter.resume(returning: .failure(.cancelled)) }
        waiters = [:]
    }

    private func make(_ job: Job) async -> Result<String, SpeechFailure> {
        let cache = cache
        if await files.run({ cache.hit(job.path) }) { return .success(job.path) }
        let program = job.settings.command[0]
        let partial = cache.partialPath(for: job.path)
        let arguments = job.settings.arguments(text: job.text, out: partial)
        let input = job.settings.textInArguments ? [] : Array(job.text.utf8) + [0x0A]
        let limit = job.settings.timeLimit
        let started = ContinuousClock.now
        let ran = await engine.run { () -> Result<ChildProcess.Outcome, SpeechFailure> in
            do throws(FileWriteError) { try cache.makeFolder() } catch {
                return .failure(SpeechFailure("the announcement could not be kept: \(error)"))
            }
            cache.discard(partial)
            do throws(ChildProcess.SpawnFailure) {
                return .success(try ChildProcess.run(arguments, input: input, timeLimit: limit, outputLimit: 1024))
            } catch {
                let hint = error.isMissingProgram
                    ? " (install it, or set the session's tts.command; espeak-ng installs with `apt install espeak-ng`)" : ""
                return .failure(SpeechFailure("the speech engine \(error)\(hint)"))
            }
        }
        let outcome: ChildProcess.Outcome
        switch ran {
        case .failure(let failure): return .failure(failure)
        case .success(let value): outcome = value
        }
        let said = outcome.output.isEmpty ? "" : ": \(outcome.output)"
        var problem: String? = switch outcome.ending {
        case .exited(0): nil
        case .exited(let status): "the speech engine \(program) failed with status \(status)\(said)"
        case .signalled(let signal): "the speech engine \(program) was killed by signal \(signal)\(said)"
        case .timedOut: "the speech engine \(program) took longer than \(DurationText.format(limit)) and was stopped (tts.timeLimit)"
        case .stopped: "the speech engine \(program) was ended: jukeboxd is stopping"
        }
        // What the engine wrote must be there, of a sane size, and audio we can play.
        if problem == nil {
            let size = await files.run { FilePath.size(partial) } ?? 0
            if size == 0 {
                problem = "the speech engine \(program) wrote no audio file\(said)"
            } else if size > SpeechCache.maxFileSize {
                problem = "the speech engine \(program) wrote \(size) bytes of audio, more than the \(SpeechCache.maxFileSize) an announcement may be"
            } else {
                do {
                    _ = try await decoder.probe(ClipSource(file: "speech", path: partial))
                } catch {
                    problem = "the speech engine \(program) did not write audio that can be played (\(error))"
                }
            }
        }
        if let problem {
            await files.run { cache.discard(partial) }
            return .failure(SpeechFailure(problem))
        }
        let kept = await files.run { () -> FileWriteError? in
            do throws(FileWriteError) { try cache.keep(partial, as: job.path) } catch { return error }
            return nil
        }
        if let kept { return .failure(SpeechFailure("the announcement could not be kept: \(kept)")) }
        logger.debug("made the announcement \"\(job.text.prefix(60))\" with \(program) in \(DurationText.format(ContinuousClock.now - started))")
        return .success(job.path)
    }
}
