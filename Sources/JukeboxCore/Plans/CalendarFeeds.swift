import JukeboxCalendar
import JukeboxFiles
import Logging
import ServiceLifecycle

/// What an address gave: nothing new since the validators, or a calendar's text.
public enum CalendarFetch: Sendable, Equatable {
    /// What a server says to tell a copy is still current (`ETag`, `Last-Modified`).
    public struct Validators: Sendable, Equatable {
        public var etag: String?
        public var lastModified: String?
        public init(etag: String? = nil, lastModified: String? = nil) {
            self.etag = etag
            self.lastModified = lastModified
        }
    }

    case notModified
    case fetched(text: String, validators: Validators)
}

/// Why an address gave no calendar, in words (no NIO or POSIX text).
public struct CalendarFetchError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Fetches a calendar's address (`JukeboxFetch`'s over HTTP), within `ICalendar.maxBytes`.
public protocol CalendarFetcher: Sendable {
    func fetch(_ address: String, since: CalendarFetch.Validators?) async throws(CalendarFetchError) -> CalendarFetch
}

/// The session's calendars: each is read (a file) or fetched (an address) at the start and
/// every `refresh`, expanded on a thread of its own, and what it covers handed to the
/// timetable. The last good copy of each is kept in `folder` (`NAME.ics`, written
/// atomically) and used at the start before any fetch, so a start without the network has
/// the plans it had. A copy that cannot be read keeps the last good one, and says so once.
/// The dates are worked out again each new day.
public actor CalendarFeeds: Service {
    /// A calendar as last read, for `jukebox plan`, status and the metrics.
    public struct State: Sendable, Equatable {
        public var name: String
        public var source: String
        /// When a good copy was last read or found unchanged (seconds since the epoch).
        public var readAt: Int64?
        /// Why the last read failed, while it does.
        public var problem: String?
        /// Reads that failed since the start.
        public var failures: Int
    }

    private struct Feed {
        var calendar: DayPlans.Calendar
        var text: String?
        var validators: CalendarFetch.Validators?
        var readAt: Int64?
        var triedAt: Int64?
        var problem: String?
        var failures = 0
        /// The local date it was expanded for last.
        var expandedFor: CivilDate?
    }

    private let schedule: ScheduleBoard
    private let timetable: ClipTimetable
    private let time: TimeSource
    private let clock: ElapsedClock
    private let fetcher: (any CalendarFetcher)?
    private let folder: String?
    private let logger: Logger
    /// Told when a calendar's health changes (`plans`), for the front ends that show it.
    private let events: EventBus?
    private var feeds: [String: Feed] = [:]
    private var started = false
    /// The calendars being read now: one read of each at a time.
    private var reading = Set<String>()
    private let nap = WakeableSleep()
    /// File reads and writes, and libical's expansion, run here: never on the cooperative pool.
    private let work = BlockingWorkQueue(label: "jukebox.calendars")

    public init(
        schedule: ScheduleBoard, timetable: ClipTimetable, time: TimeSource, fetcher: (any CalendarFetcher)?, folder: String?,
        events: EventBus? = nil, logger: Logger
    ) {
        self.events = events
        self.schedule = schedule
        self.timetable = timetable
        self.time = time
        self.clock = ElapsedClock(time.clock)
        self.fetcher = fetcher
        self.folder = folder
        self.logger = logger
    }

    private var calendars: [DayPlans.Calendar] { schedule.current.session.dayPlans?.calendars ?? [] }

    public var states: [State] {
        calendars.compactMap { calendar in
            feeds[calendar.name].map {
                State(name: calendar.name, source: calendar.source.description, readAt: $0.readAt, problem: $0.problem, failures: $0.failures)
            }
        }
    }

    /// Takes up the last good copies kept, before anything plays: call before `run()`.
    public func start() async {
        guard !started else { return }
        started = true
        syncFeeds()
        for name in calendars.map(\.name) {
            guard let path = copyPath(name), let text = try? await work.run({ String(decoding: try FilePath.read(path, limit: ICalendar.maxBytes), as: UTF8.self) }) else { continue }
            if await take(text, for: name, saving: false) {
                feeds[name]?.readAt = nil
                logger.info("calendar \(name): the copy kept at \(path) is used until it is read again")
            }
        }
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.keepReading() }
        } catch is CancellationError {}
    }

    private func keepReading() async throws {
        while true {
            syncFeeds()
            let now = time.wallSeconds()
            var soonest: Int64?
            for calendar in calendars {
                // A reload while another was read may have taken this one away.
                guard let feed = feeds[calendar.name] else { continue }
                let due = (feed.triedAt ?? .min) + calendar.refresh.components.seconds
                if now >= due { await read(calendar.name) } else { soonest = min(soonest ?? due, due) }
                await expandIfNewDay(calendar.name)
            }
            let wait = max(min((soonest ?? now + WallTime.longestNap) - now, WallTime.longestNap), 1)
            try await nap.sleep(for: .seconds(calendars.isEmpty ? WallTime.untilWoken : wait), on: clock)
        }
    }

    /// Has every calendar read again at once by the loop (a reload, SIGHUP), without waiting.
    public func readAllSoon() {
        syncFeeds()
        for name in feeds.keys { feeds[name]?.triedAt = nil }
        nap.wake()
    }

    /// Reads every calendar again now, and returns once each is applied.
    public func readAll() async {
        syncFeeds()
        for name in calendars.map(\.name) { await read(name) }
        nap.wake()
    }

    /// Keeps one feed for each calendar of the session; a calendar whose source changed is
    /// read afresh.
    private func syncFeeds() {
        var kept: [String: Feed] = [:]
        for calendar in calendars {
            if var feed = feeds[calendar.name], feed.calendar.source == calendar.source {
                if feed.calendar != calendar { feed.expandedFor = nil }
                feed.calendar = calendar
                kept[calendar.name] = feed
            } else {
                kept[calendar.name] = Feed(calendar: calendar)
            }
        }
        feeds = kept
    }

    /// Reads or fetches one calendar, and hands what it covers to the timetable.
    private func read(_ name: String) async {
        guard let feed = feeds[name], reading.insert(name).inserted else { return }
        defer { reading.remove(name) }
        feeds[name]?.triedAt = time.wallSeconds()
        let text: String
        switch feed.calendar.source {
        case .file(let path):
            do {
                text = try await work.run { String(decoding: try FilePath.read(path, limit: ICalendar.maxBytes), as: UTF8.self) }
            } catch {
                failed(name, "\(path): \(error)")
                return
            }
        case .web(let address):
            guard let fetcher else {
                failed(name, "\(address): this jukeboxd fetches no addresses")
                return
            }
            do {
                switch try await fetcher.fetch(address, since: feed.text == nil ? nil : feed.validators) {
                case .notModified:
                    markRead(name)
                    cleared(name)
                    return
                case .fetched(let fetched, let validators):
                    text = fetched
                    feeds[name]?.validators = validators
                }
            } catch {
                failed(name, "\(address): \(error.description)")
                return
            }
        }
        guard feeds[name] != nil else { return }
        if text == feeds[name]?.text {
            markRead(name)
            cleared(name)
            return
        }
        if await take(text, for: name, saving: true) {
            markRead(name)
            cleared(name)
        }
    }

    /// Expands `text` for `name` and hands it to the timetable; false (and said) when it is
    /// not a calendar, keeping the last good one.
    private func take(_ text: String, for name: String, saving: Bool) async -> Bool {
        guard let feed = feeds[name] else { return false }
        let today = time.zone.localTime(at: time.wallSeconds()).date
        let keys = Set(feed.calendar.plans.map(\.summary))
        let window = (from: today.daysSinceEpoch - DayPlanner.ruleWindow.before, through: today.daysSinceEpoch + DayPlanner.ruleWindow.after)
        let result = await work.run { () -> Result<[ICalendar.Occurrence], ICalendar.Problem> in
            // libical's tree of a large calendar is many small blocks, freed at once: the
            // allocator is told to give them back, or a daemon that read one keeps its size.
            defer { ReleaseMemory.now() }
            do throws(ICalendar.Problem) {
                return .success(try ICalendar.read(text, from: window.from, through: window.through, keeping: keys))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .failure(let problem):
            failed(name, "\(feed.calendar.source) \(problem)")
            return false
        case .success(let occurrences):
            guard feeds[name] != nil else { return false }
            feeds[name]?.text = text
            feeds[name]?.expandedFor = today
            await timetable.calendarChanged(name, dates: CalendarDates(occurrences, zone: time.zone))
            if saving, let path = copyPath(name) {
                do {
                    let folder = self.folder!
                    try await work.run {
                        try FilePath.makeFolders(folder)
                        try AtomicFile.write(Array(text.utf8), to: path, mode: 0o600)
                    }
                } catch {
                    logger.warning("calendar \(name): its copy could not be kept at \(path): \(error); it is read again at the next start")
                }
            }
            logger.info("calendar \(name): read, \(Plural.count(occurrences.count, "occurrence")) of events choosing plans in the coming \(DayPlanner.ruleWindow.after) days", metadata: ["calendar": "\(name)"])
            return true
        }
    }

    private func expandIfNewDay(_ name: String) async {
        guard let feed = feeds[name], let text = feed.text else { return }
        let today = time.zone.localTime(at: time.wallSeconds()).date
        if feed.expandedFor != today { _ = await take(text, for: name, saving: false) }
    }

    /// A good copy was read, or found unchanged: the first since the start is told.
    private func markRead(_ name: String) {
        let first = feeds[name]?.readAt == nil
        feeds[name]?.readAt = time.wallSeconds()
        if first { events?.publish(.plans(byHand: false)) }
    }

    private func failed(_ name: String, _ problem: String) {
        guard let feed = feeds[name] else { return }
        feeds[name]?.failures += 1
        guard feed.problem != problem else { return }
        feeds[name]?.problem = problem
        events?.publish(.plans(byHand: false))
        let keeping = feed.text == nil ? "its plans are not used until it can be read" : "the last good copy is used meanwhile"
        logger.warning("calendar \(name): \(problem); it is tried again in \(DurationText.format(feed.calendar.refresh)), and \(keeping)", metadata: ["calendar": "\(name)"])
    }

    private func cleared(_ name: String) {
        guard feeds[name]?.problem != nil else { return }
        feeds[name]?.problem = nil
        events?.publish(.plans(byHand: false))
        logger.notice("calendar \(name): read again", metadata: ["calendar": "\(name)"])
    }

    /// `--check`'s line for a calendar: a file is read and expanded as the daemon does it
    /// (what is wrong with it is a warning: the daemon keeps its last good copy); an address
    /// is fetched only when jukeboxd runs. Blocks: call it off the cooperative pool.
    public static func checkLine(_ calendar: DayPlans.Calendar, today: CivilDate) -> String {
        guard case .file(let path) = calendar.source else {
            return "calendar \(calendar.name): \(calendar.source) is fetched when jukeboxd runs, and every \(DurationText.format(calendar.refresh))"
        }
        let window = (from: today.daysSinceEpoch - DayPlanner.ruleWindow.before, through: today.daysSinceEpoch + DayPlanner.ruleWindow.after)
        do {
            let text = String(decoding: try FilePath.read(path, limit: ICalendar.maxBytes + 1), as: UTF8.self)
            let found = try ICalendar.read(text, from: window.from, through: window.through, keeping: Set(calendar.plans.map(\.summary)))
            return "calendar \(calendar.name): \(path): \(Plural.count(found.count, "occurrence")) of events choosing plans in the coming \(DayPlanner.ruleWindow.after) days"
        } catch let problem as ICalendar.Problem {
            return "calendar \(calendar.name): warning: \(path) \(problem); jukeboxd uses its last good copy until it can be read"
        } catch {
            return "calendar \(calendar.name): warning: \(path): \(error); jukeboxd uses its last good copy until it can be read"
        }
    }

    private func copyPath(_ name: String) -> String? {
        folder.map { FilePath.join($0, name + ".ics") }
    }
}
