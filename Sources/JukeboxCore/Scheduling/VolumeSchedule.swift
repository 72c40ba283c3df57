import Logging
import ServiceLifecycle

/// The session's volume by time of day (`"volume": [{"from": "07:00", "level": 0.8}, …]`).
/// At each step it ramps the player's volume to the step's level over `rampDuration`, in
/// small steps, so a change never jumps mid-clip. A volume set by hand holds until the next
/// step: the schedule acts only when a step comes (`appliedSince` is the step it last
/// applied), and that mark is saved with the state, so a restart keeps a level set by hand,
/// while a step that came while the daemon was down is applied when it starts.
///
/// The player owns the volume; this only asks it for a new one, as a client would.
public actor VolumeSchedule: Service {
    /// How long a change of level takes, and in how many moves.
    public static let rampDuration: Duration = .seconds(5)
    static let rampMoves = 20

    private var session: Session
    private let player: Player
    private let events: EventBus
    private let clock: ElapsedClock
    private let wallClock: WallClock
    private let zone: any LocalZone
    private let logger: Logger
    /// When the step whose level was last applied began (seconds since the epoch); nil:
    /// none yet.
    public private(set) var appliedSince: Int64?
    /// Called once a step's level is set, so it is saved (the core saves the state).
    private var onChange: (@Sendable () async -> Void)?
    private let nap = Nap()
    private var ramping: Task<Void, Never>?

    public init(
        session: Session, player: Player, events: EventBus, clock: some Clock<Duration>, wallClock: @escaping WallClock = SystemWallClock.now,
        zone: any LocalZone = SystemLocalTime(), logger: Logger
    ) {
        self.session = session
        self.player = player
        self.events = events
        self.clock = ElapsedClock(clock)
        self.wallClock = wallClock
        self.zone = zone
        self.logger = logger
    }

    public func setChangeHook(_ hook: @escaping @Sendable () async -> Void) { onChange = hook }

    /// The step in force now: its level (held to `maxVolume`) and when it began; nil without
    /// a schedule.
    public func inForce() -> (level: Double, since: Int64)? {
        session.volumeSchedule.inForce(at: wallSeconds(), zone: zone, location: session.location).map { (min($0.level, session.maxVolume), $0.since) }
    }

    /// At start-up: the level the volume should start at. `saved` is the volume and step mark
    /// from the state file, if any. A volume saved after the step in force began (set by
    /// hand, or by that step) is kept; otherwise the step's level is used. Call before `run()`.
    public func start(saved: (volume: Double, stepSince: Int64?)?) async {
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

    /// A volume set by hand ends a ramp under way: the hand wins until the next step.
    public func setByHand() {
        ramping?.cancel()
        ramping = nil
    }

    /// Takes up a reloaded session's schedule; a changed schedule applies its step in force
    /// now, ramping to it.
    public func reload(_ session: Session) {
        let changed = session.volumeSchedule != self.session.volumeSchedule || session.maxVolume != self.session.maxVolume
        self.session = session
        if changed { appliedSince = nil }
        nap.wake()
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
            let now = wallSeconds()
            if let step = inForce(), appliedSince.map({ step.since > $0 }) ?? true {
                appliedSince = step.since
                logger.info("volume schedule: \(Self.percent(step.level)) from now, over \(DurationText.format(Self.rampDuration))")
                ramp(to: step.level)
            }
            // With no steps it sleeps until a reload brings some; otherwise until the next step,
            // looking at the wall clock at least once a minute (a clock that is set).
            let next = session.volumeSchedule.next(after: now, zone: zone, location: session.location)
            let wait = session.volumeSchedule.isEmpty ? ClipTimetable.untilReloaded : min(next.map { $0 - now } ?? ClipTimetable.longestNap, ClipTimetable.longestNap)
            try await nap.sleep(for: .seconds(max(wait, 1)), on: clock)
        }
    }

    /// Moves the volume to `level` in `rampMoves` even moves over `rampDuration`, then says so
    /// (a `volume` event) and has it saved.
    private func ramp(to level: Double) {
        ramping?.cancel()
        let (player, clock, events, onChange) = (player, clock, events, onChange)
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
            events.publish(.volume(Int((level * Double(Core.volumeRange.upperBound)).rounded())))
            await onChange?()
        }
    }

    /// Waits for the ramp under way, if any (tests).
    func rampFinished() async { await ramping?.value }


    private func wallSeconds() -> Int64 { Int64(wallClock().rounded(.down)) }

    static func percent(_ level: Double) -> String { "\(Int((level * 100).rounded()))" }
}
