import Logging
import ServiceLifecycle

/// The one owner of the volume: every level the player plays at is set here, and only here is
/// a `volume` event published. The levels come from three places:
/// - **by hand** (`setByHand`: the socket, the page, MQTT), held to the session's `maxVolume`;
/// - **the session**: its fixed `volume`, or its schedule by time of day (`"volume": [{"from":
///   "07:00", "level": 0.8}, …]`), and a lower `maxVolume` on a reload;
/// - **the saved state** at start-up (`start`).
///
/// At each step of a schedule it ramps the volume to the step's level over `rampDuration`, in
/// small steps, so a change never jumps mid-clip. A volume set by hand holds until the next
/// step: the schedule acts only when a step comes (`appliedSince` is the step it last
/// applied), and that mark is saved with the state, so a restart keeps a level set by hand,
/// while a step that came while the daemon was down is applied when it starts.
///
/// The player applies the level to the samples; it never chooses one.
public actor VolumeControl: Service {
    /// How long a change of level takes, and in how many moves.
    public static let rampDuration: Duration = .seconds(5)
    static let rampMoves = 20

    /// The schedule in force, read at each use.
    let schedule: ScheduleBoard
    private var session: Session { schedule.current.session }
    private let player: Player
    private let events: EventBus
    private let time: TimeSource
    private let clock: ElapsedClock
    private let logger: Logger
    /// When the step whose level was last applied began (seconds since the epoch); nil:
    /// none yet.
    public private(set) var appliedSince: Int64?
    /// Called once a step's level is set, so it is saved (the core saves the state).
    private var onChange: (@Sendable () async -> Void)?
    private let nap = WakeableSleep()
    private var ramping: Task<Void, Never>?

    public init(
        schedule: ScheduleBoard, player: Player, events: EventBus, time: TimeSource, logger: Logger
    ) {
        self.schedule = schedule
        self.player = player
        self.events = events
        self.time = time
        self.clock = ElapsedClock(time.clock)
        self.logger = logger
        schedule.follow { [weak self] old in await self?.scheduleChanged(from: old.session) }
    }

    public func setChangeHook(_ hook: @escaping @Sendable () async -> Void) { onChange = hook }

    /// The step in force now: its level (held to `maxVolume`) and when it began; nil without
    /// a schedule.
    public func inForce() -> (level: Double, since: Int64)? {
        session.volumeSchedule.inForce(at: time.wallSeconds(), zone: time.zone, location: session.location).map { (min($0.level, session.maxVolume), $0.since) }
    }

    /// At start-up: the level the volume should start at. `saved` is the volume and step mark
    /// from the state file, if any. A volume saved after the step in force began (set by
    /// hand, or by that step) is kept; otherwise the step's level is used. Call before `run()`.
    public func start(saved: (volume: Double, stepSince: Int64?)?) async {
        await player.setCeiling(session.maxVolume)
        guard let step = inForce() else {
            if let saved { await player.setVolume(min(saved.volume, session.maxVolume)) }
            return
        }
        appliedSince = step.since
        if let saved, let since = saved.stepSince, since >= step.since {
            await player.setVolume(min(saved.volume, session.maxVolume))
        } else {
            await player.setVolume(step.level)
            logger.info("volume \(Self.percent(step.level)) from the volume schedule")
        }
    }

    /// Sets `level` (0–1), held to `maxVolume`, at once; it ends a ramp under way: the hand
    /// wins until the next step. Returns the level set.
    @discardableResult
    public func setByHand(_ level: Double) async -> Double {
        ramping?.cancel()
        ramping = nil
        let level = min(max(level, 0), session.maxVolume)
        await player.setVolume(level)
        publish(level)
        return level
    }

    /// Takes up a new schedule: a new fixed `volume` (or the end of a schedule) is set at
    /// once, a lower `maxVolume` brings a louder level down to it, and a changed schedule
    /// applies its step in force now, ramping to it.
    private func scheduleChanged(from old: Session) async {
        let session = self.session
        let changed = session.volumeSchedule != old.volumeSchedule || session.maxVolume != old.maxVolume
        if session.volumeSchedule.isEmpty, session.volume != old.volume || !old.volumeSchedule.isEmpty {
            ramping?.cancel()
            await player.setVolume(session.volume)
        }
        if session.maxVolume != old.maxVolume { await player.setCeiling(session.maxVolume) }
        if session.maxVolume < old.maxVolume, await player.volume > session.maxVolume {
            ramping?.cancel()
            await player.setVolume(session.maxVolume)
        }
        if changed { appliedSince = nil }
        nap.wake()
    }

    /// The one place a `volume` event is made.
    private func publish(_ level: Double) {
        events.publish(.volume(Int((level * Double(Jukebox.volumeRange.upperBound)).rounded())))
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.keepSteps() }
        } catch is CancellationError {
            // Shutdown while waiting for the next step.
        }
        ramping?.cancel()
    }

    private func keepSteps() async throws {
        while true {
            let now = time.wallSeconds()
            if let step = inForce(), appliedSince.map({ step.since > $0 }) ?? true {
                appliedSince = step.since
                logger.info("volume schedule: \(Self.percent(step.level)) from now, over \(DurationText.format(Self.rampDuration))")
                ramp(to: step.level)
            }
            // With no steps it sleeps until a reload brings some; otherwise until the next step,
            // looking at the wall clock at least once a minute (a clock that is set).
            let next = session.volumeSchedule.next(after: now, zone: time.zone, location: session.location)
            try await nap.sleep(for: .seconds(WallTime.wait(now: now, next: next, nothingToKeep: session.volumeSchedule.isEmpty)), on: clock)
        }
    }

    /// Moves the volume to `level` in `rampMoves` even moves over `rampDuration`, then says so
    /// (a `volume` event) and has it saved.
    private func ramp(to level: Double) {
        ramping?.cancel()
        let (player, clock, onChange) = (player, clock, onChange)
        ramping = Task {
            let start = await player.volume
            let began = clock.now
            for move in 1...Self.rampMoves {
                let level = start + (level - start) * Double(move) / Double(Self.rampMoves)
                do {
                    try await clock.sleep(until: began + Self.rampDuration * move / Self.rampMoves)
                } catch {
                    return
                }
                // Set by hand meanwhile: the hand wins.
                guard !Task.isCancelled else { return }
                await player.setVolume(level)
            }
            self.publish(level)
            await onChange?()
        }
    }

    /// Waits for the ramp under way, if any (tests).
    func rampFinished() async { await ramping?.value }



    static func percent(_ level: Double) -> String { "\(Int((level * 100).rounded()))" }
}
