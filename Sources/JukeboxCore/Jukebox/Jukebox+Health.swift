/// Whether the daemon is doing its job, for `GET /healthz`, `jukebox health` and whatever
/// watches them (a monitoring agent, cron): one reason in words when it is not.
extension Jukebox {
    public struct Health: Sendable, Equatable {
        /// Why it is unhealthy; nil when it is healthy.
        public var problem: String?
        public var isHealthy: Bool { problem == nil }
        /// The alert on now: the daemon is doing its job (sounding it), and says so.
        public var alert: String? = nil

        /// How it is said in one line: `ok`, `ok; the lockdown alert is on`, or the problem.
        public var words: String { problem ?? (alert.map { "ok; the \($0) alert is on" } ?? "ok") }
    }

    /// How long the device may be missing before the daemon counts as unhealthy: long enough
    /// for a DAC being replugged or a sound server restarting, short enough that a bell would
    /// be missed soon after.
    public static let deviceMissingLimit: Duration = .seconds(120)
    /// An output call stuck this long is what the systemd watchdog also acts on.
    public static let stallLimit: Duration = .seconds(20)

    /// The first problem found: the audio output stuck in a call, the device missing for more
    /// than `deviceMissingLimit`, or the state file not being saved.
    public func health() async -> Health {
        var health = await problem()
        health.alert = await queue.alert?.name
        return health
    }

    private func problem() async -> Health {
        if let stall = outputStall(), stall > Self.stallLimit {
            return Health(problem: "the audio output has been stuck in one call for \(DurationText.format(stall))")
        }
        let missing = await player.missingFor
        if missing > Self.deviceMissingLimit, case .retrying(_, let error) = await player.device {
            return Health(problem: "the audio device \"\(error.device)\" has been missing for \(DurationText.format(missing)): \(error.reason)")
        }
        if let problem = await writer?.problem {
            return Health(problem: "the state is not being saved: \(problem)")
        }
        return Health(problem: nil)
    }
}
