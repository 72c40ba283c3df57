import Logging

/// Runs the session's hooks (`Hooks`) on a thread of their own, one at a time, each with its
/// time limit. The clip reaches a hook only through environment variables (`JUKEBOX_CLIP_ID`,
/// `JUKEBOX_CLIP_TITLE`, `JUKEBOX_CLIP_FILE`, `JUKEBOX_TICKET`, `JUKEBOX_ORIGIN`,
/// `JUKEBOX_OUTCOME`, `JUKEBOX_HOOK`), never spliced into a command line. Whatever a hook
/// does (fails, hangs, cannot start), it is logged and playback goes on.
public actor HookRunner {
    private var hooks: Hooks
    private let logger: Logger
    private let io = BlockingWorkQueue(label: "jukebox.hooks")

    public init(_ hooks: Hooks, logger: Logger) {
        self.hooks = hooks
        self.logger = logger
    }

    /// A reload or an edit brings new hooks; they apply from the next one run.
    public func configure(_ hooks: Hooks) { self.hooks = hooks }

    public func run(_ moment: Hooks.Moment, entry: QueueEntry? = nil, outcome: PlayOutcome? = nil) async {
        guard let command = hooks.commands[moment], !command.isEmpty else { return }
        var environment = ["JUKEBOX_HOOK": moment.rawValue]
        if let entry {
            environment["JUKEBOX_CLIP_ID"] = entry.clip.id
            environment["JUKEBOX_CLIP_TITLE"] = entry.clip.title
            environment["JUKEBOX_CLIP_FILE"] = entry.clip.source.path
            environment["JUKEBOX_TICKET"] = "\(entry.ticket)"
            environment["JUKEBOX_ORIGIN"] = "\(entry.origin)"
        }
        if let outcome { environment["JUKEBOX_OUTCOME"] = outcome.name }
        let limit = hooks.timeLimit
        let started = ContinuousClock.now
        let result = await io.run { [environment] () -> Result<ChildProcess.Outcome, ChildProcess.SpawnFailure> in
            Result { () throws(ChildProcess.SpawnFailure) in try ChildProcess.run(command, environment: environment, timeLimit: limit, whileStopping: true) }
        }
        let took = DurationText.format(ContinuousClock.now - started)
        var metadata: Logger.Metadata = ["hook": "\(moment.rawValue)"]
        if let entry { metadata["clip"] = "\(entry.clip.id)"; metadata["ticket"] = "\(entry.ticket)" }
        switch result {
        case .failure(let failure):
            logger.warning("hook \(moment.rawValue): \(failure); playback goes on", metadata: metadata)
        case .success(let ran):
            let said = ran.output.isEmpty ? "" : ": \(ran.output)"
            switch ran.ending {
            case .exited(0): logger.info("hook \(moment.rawValue) ran (\(took))\(said)", metadata: metadata)
            case .exited(let status): logger.warning("hook \(moment.rawValue) failed with status \(status)\(said); playback goes on", metadata: metadata)
            case .signalled(let signal): logger.warning("hook \(moment.rawValue) was killed by signal \(signal)\(said); playback goes on", metadata: metadata)
            case .timedOut: logger.warning("hook \(moment.rawValue) took longer than \(DurationText.format(limit)) and was stopped\(said); playback goes on", metadata: metadata)
            case .stopped: logger.info("hook \(moment.rawValue) was ended: jukeboxd is stopping", metadata: metadata)
            }
        }
    }
}
