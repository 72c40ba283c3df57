import Logging
import ServiceLifecycle

/// Whether the daemon keeps quiet now, and the one owner of that answer. Quiet comes from
/// the session's `quiet` windows, unless a person set it by hand (`jukebox quiet`):
/// - `on` keeps quiet until it is turned off; `for 30m` until that time is up;
/// - `off` ends quiet by hand, and lifts the session's quiet hours in force until they end.
///
/// While quiet, the scheduler's random picks and the timetable's `at` times are skipped.
/// What a client asks for still plays, unless it asked to wait (`afterQuiet`): the queue
/// holds such requests, durably, and this releases them to the back of the queue as soon as
/// quiet ends.
///
/// It looks at the wall clock at least once a minute while anything here depends on the
/// time, so a clock that is set, or the end of a quiet hour, is seen within a minute.
public actor QuietHours: Service {
    /// Quiet set by hand, as the state file keeps it.
    public struct Override: Codable, Sendable, Equatable {
        /// true: quiet by hand; false: the session's quiet hours lifted.
        public var quiet: Bool
        /// When it ends, in seconds since the epoch; nil: when it is changed by hand.
        public var until: Int64?

        public init(quiet: Bool, until: Int64?) {
            self.quiet = quiet
            self.until = until
        }
    }

    /// What a person asks for.
    public enum Request: Sendable, Equatable {
        case on
        case off
        case `for`(Duration)
    }

    /// Whether it is quiet now, why, and until when.
    public struct Status: Sendable, Equatable {
        public var quiet: Bool
        /// Set by hand (`jukebox quiet`), rather than by the session's quiet hours.
        public var byHand: Bool
        /// When this changes next, in seconds since the epoch: the end of quiet by hand, the
        /// end of the quiet hours, or the start of the next ones. nil: not until someone
        /// changes it (or not within a week).
        public var until: Int64?

        public init(quiet: Bool, byHand: Bool, until: Int64?) {
            self.quiet = quiet
            self.byHand = byHand
            self.until = until
        }
    }

    /// `quiet for` takes from a minute to a week.
    public static let forRange: ClosedRange<Duration> = .seconds(60) ... .seconds(7 * 86_400)
    /// How many days ahead the next change of the session's quiet hours is looked for.
    static let lookahead = 8

    /// The schedule in force, read at each use.
    let schedule: ScheduleBoard
    private var session: Session { schedule.current.session }
    private let queue: ClipPlayQueue
    private let events: EventBus
    private let time: TimeSource
    private let clock: ElapsedClock
    private let logger: Logger
    public private(set) var override: Override?
    /// The status last lastPublished (`quiet` events), so only a change is lastPublished.
    private var lastPublished: Status?
    private let nap = WakeableSleep()

    public init(
        schedule: ScheduleBoard, queue: ClipPlayQueue, events: EventBus, time: TimeSource, logger: Logger
    ) {
        self.schedule = schedule
        self.queue = queue
        self.events = events
        self.time = time
        self.clock = ElapsedClock(time.clock)
        self.logger = logger
        schedule.follow { [weak self] _ in await self?.scheduleChanged() }
    }

    // MARK: - Reading

    /// Whether nothing the daemon starts by itself may play at `moment`.
    public func isQuiet(at moment: Int64) -> Bool { status(at: moment).quiet }

    /// Whether nothing the daemon starts by itself may play now.
    public func isQuietNow() -> Bool { isQuiet(at: time.wallSeconds()) }

    public func statusNow() -> Status { status(at: time.wallSeconds()) }

    public func status(at moment: Int64) -> Status {
        if let override, override.until.map({ moment < $0 }) ?? true {
            return Status(quiet: override.quiet, byHand: true, until: override.until)
        }
        return Status(quiet: hoursQuiet(at: moment), byHand: false, until: nextChangeOfHours(after: moment))
    }

    /// Whether the session's quiet windows hold `moment`.
    private func hoursQuiet(at moment: Int64) -> Bool {
        session.quiet.hold(moment, zone: time.zone, location: session.location, holidays: session.holidays)
    }

    /// The first moment after `moment` at which the session's quiet hours begin or end,
    /// within `lookahead` days; nil when they never change (none, or always quiet).
    func nextChangeOfHours(after moment: Int64) -> Int64? {
        session.quiet.nextChange(after: moment, zone: time.zone, location: session.location, holidays: session.holidays, days: Self.lookahead)
    }

    /// The next span of the session's quiet hours: the one in force at `moment` (from when it
    /// began, within `lookahead` days), or the next to begin within that time. `to` is nil when
    /// it does not end within that time.
    public func nextHours(after moment: Int64) -> (from: Int64, to: Int64?)? {
        if hoursQuiet(at: moment) {
            let began = session.quiet.lastChange(atOrBefore: moment, zone: time.zone, location: session.location, holidays: session.holidays, days: Self.lookahead)
            return (began ?? moment, nextChangeOfHours(after: moment))
        }
        guard let from = nextChangeOfHours(after: moment) else { return nil }
        return (from, nextChangeOfHours(after: from))
    }

    // MARK: - Changing

    /// Sets quiet by hand; returns the status now. Requests held for the end of quiet are
    /// released at once if it is not quiet any more.
    @discardableResult
    public func set(_ request: Request) async -> Status {
        let now = time.wallSeconds()
        switch request {
        case .on:
            override = Override(quiet: true, until: nil)
        case .for(let length):
            override = Override(quiet: true, until: now + length.components.seconds)
        case .off:
            // Quiet hours in force are lifted until they end; otherwise nothing is left to lift.
            override = hoursQuiet(at: now) ? Override(quiet: false, until: nextChangeOfHours(after: now)) : nil
        }
        let status = status(at: now)
        logger.notice("quiet \(Self.describe(request)) by hand: \(describe(status))")
        await settle(now: now)
        nap.wake()
        return status
    }

    /// Releases held requests if it is not quiet, and announces a change of status. The
    /// release comes first, so the write that the `quiet` event brings about holds it too.
    private func settle(now: Int64) async {
        if let until = override?.until, now >= until {
            override = nil
            logger.notice("quiet by hand ended: \(describe(status(at: now)))")
        }
        let status = status(at: now)
        var released: [QueueEntry] = []
        if !status.quiet { released = await queue.releaseHeld() }
        if !released.isEmpty {
            logger.info("quiet ended: \(Plural.count(released.count, "request")) held for it queued")
        }
        if status != lastPublished || !released.isEmpty {
            lastPublished = status
            events.publish(.quiet(status))
        }
    }

    /// Releases held requests if it is not quiet now (a request held just as quiet ended).
    public func settleNow() async { await settle(now: time.wallSeconds()) }

    /// Takes up a new schedule's quiet hours at once.
    private func scheduleChanged() {
        nap.wake()
    }

    /// Puts back quiet set by hand, from the state file. Call before `run()`.
    public func restore(_ saved: Override?) {
        override = saved
    }

    // MARK: - Running

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.watch() }
        } catch is CancellationError {
            // Shutdown while waiting for the next change.
        }
    }

    private func watch() async throws {
        // The status at start-up is no change to announce (nor to save).
        if lastPublished == nil { lastPublished = status(at: time.wallSeconds()) }
        while true {
            let now = time.wallSeconds()
            await settle(now: now)
            let status = status(at: now)
            // Nothing here changes with time: sleep until a change by hand or a reload.
            let timeless = session.quiet.isEmpty && override?.until == nil
            try await nap.sleep(for: .seconds(WallTime.wait(now: now, next: status.until, nothingToKeep: timeless)), on: clock)
        }
    }



    // MARK: - Words

    static func describe(_ request: Request) -> String {
        switch request {
        case .on: "on"
        case .off: "off"
        case .for(let length): "for \(DurationText.format(length))"
        }
    }

    /// The status in words, with its end in local time.
    func describe(_ status: Status) -> String {
        let state = status.quiet ? "quiet" : "not quiet"
        guard let until = status.until else { return status.byHand && status.quiet ? "\(state) until turned off" : state }
        let reading = time.zone.localTime(at: until)
        return "\(state) until \(reading.date) \(TimeOfDay(minuteOfDay: reading.secondOfDay / 60)!)"
    }
}
