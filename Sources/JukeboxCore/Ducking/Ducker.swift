#if canImport(Glibc)
import Glibc
#endif

import Logging

/// Lowers things while clips sound and puts them back after: the one duck policy. One ducker
/// lowers the session's other players (`duck`) for the clips that lower them, owns what is
/// ducked, and is the one publisher of `ducked` and `restored`; another, with no record on
/// disk and no events, lowers the music bed's gain (`bed`) under every clip. Each thing lowered
/// is a `DuckTarget`: MPD, a snapclient, the bed.
///
/// - Before the first clip of a run, each player's level is read, and the levels to go back to
///   are saved (on disk) before any player is lowered. The lowering takes `attack`, and the
///   clip waits for it (less the device's lead-in), so the music is low when the clip is heard.
/// - Clips back to back keep the music low, and so does a clip due to start by itself within
///   `release` of the last one's end. After the last one is heard, the players are raised over
///   `release`; a clip that starts meanwhile lowers them again from where they are. A pause
///   raises them; a resume lowers them again.
/// - A player put back is one that still has the level jukeboxd set: a change someone made
///   meanwhile is kept. After a crash the next start puts back what the state file lists.
/// - A player that is away or refuses is logged once and tried again in the background; no
///   clip waits for it.
public actor Ducker {
    enum Phase { case idle, lowering, low, raising }

    /// What a ducker lowers, and so which section of the session it follows.
    public enum Lowers: Sendable {
        /// The players in `duck`, for each clip that lowers them (`PlayableClip.ducks`).
        case players
        /// The music bed's gain, under every clip, as `bed` says (`level`, `attack`, `release`).
        case bed
    }

    let lowers: Lowers
    let schedule: ScheduleBoard
    let makeTarget: DuckTargetFactory?
    /// nil for the bed's: it tells no one (its state is the bed's, in `status`).
    let events: EventBus?
    let time: TimeSource
    let logger: Logger
    /// Saves the state (and returns once it is on disk); set once the state writer exists.
    var save: (@Sendable () async throws -> Void)?
    /// When something next plays by itself (a fixed time, the next pick), in seconds since the
    /// epoch: a clip due within `release` of the last one's end keeps the music low.
    var nextStart: (@Sendable () async -> Double?)?
    /// The raising that waits for a clip due soon, in case it does not come.
    var heldRaise: Task<Void, Never>?
    /// What is lowered or paused now, and what to put back.
    public internal(set) var records: [DuckRecord] = []
    var phase = Phase.idle
    /// Counts the lowerings begun: one that finds, after reading the levels or saving them,
    /// that a pause or a stop came meanwhile (and perhaps a resume began another) lowers
    /// nothing, so the music is never left low with no clip sounding.
    var lowerings = 0
    /// The lowering or raising under way.
    var work: Task<Void, Never>?
    /// Records a restart left to put back, tried until each player answers.
    var leftOver: Task<Void, Never>?
    /// Players that did not answer lately, by name, and when: skipped until a retry reaches them.
    var away: [String: Double] = [:]
    /// The claims held on players that keep them (`DuckClaims`), by player.
    var claimsHeld: [String: Task<Void, Never>] = [:]
    /// An alert sounds, or did since the players were last raised: what is lowered goes to
    /// silence, not to the duck's `level`, until the players are raised again.
    var silenced = false
    /// How other jukeboxds know this one's claims from their own: the process and a random part.
    let claimID = "\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"

    /// How often a ramp sets the level (20 steps a second).
    static let step: Duration = .milliseconds(50)
    /// How long a player that did not answer is left alone before it is tried again.
    static let retryAfter: Duration = .seconds(5)

    public init(
        schedule: ScheduleBoard, lowers: Lowers = .players, makeTarget: DuckTargetFactory?, events: EventBus?, time: TimeSource, logger: Logger
    ) {
        self.lowers = lowers
        self.schedule = schedule
        self.makeTarget = makeTarget
        self.events = events
        self.time = time
        self.logger = logger
    }

    public func setSaver(_ save: @escaping @Sendable () async throws -> Void) { self.save = save }

    public func setNextStart(_ nextStart: @escaping @Sendable () async -> Double?) { self.nextStart = nextStart }

    /// The players lowered or paused now, by name, for `status`.
    public var ducked: [String] { records.map(\.player) }

    /// How long the raising takes, as the session in force says.
    var release: Duration { settings(for: nil)?.release ?? DuckSettings.defaultRelease }

    /// What this ducker lowers for `entry` (nil: any clip), as the session in force says; nil
    /// when it lowers nothing for it.
    func settings(for entry: QueueEntry?) -> DuckSettings? {
        let session = schedule.current.session
        var settings: DuckSettings?
        switch lowers {
        case .players:
            // Whether it lowers the others was fixed when it was queued (`PlayableClip.ducks`),
            // whatever a reload says since.
            guard entry?.clip.ducks ?? true || entry?.alert != nil else { return nil }
            settings = session.duck
        case .bed:
            settings = session.bed.map { DuckSettings(level: $0.level, attack: $0.attack, release: $0.release, mode: .lower, players: [.bed]) }
        }
        // Under an alert, and after one until the players are raised: silence.
        if entry?.alert != nil || silenced { settings?.level = 0 }
        return settings
    }

    /// Whether a clip that ducks sounds now (or the players are on their way down): Home
    /// Assistant's Ducking sensor, for its own media players, even with no player named here.
    public var isDucking: Bool { phase == .lowering || phase == .low }

    /// A clip is about to start: lowers the players unless they are low already, and returns
    /// once the music will be low by the time the clip is heard (`leadIn` plays first); at
    /// once, without `waiting` (lowered all the same, under a clip that need not wait for it).
    public func clipStarting(_ entry: QueueEntry, leadIn: Duration, waiting: Bool = true) async {
        guard let attack = await duck(for: entry), waiting else { return }
        let wait = attack - leadIn
        if wait > .zero { try? await time.clock.sleep(for: wait) }
    }

    /// Playback resumed with `entry` mid-way: the players go down again (the clip fades in
    /// meanwhile; it does not wait).
    public func resumed(_ entry: QueueEntry) async {
        _ = await duck(for: entry)
    }

    /// Lowers what this ducker lowers for `entry` unless it is low already; returns the
    /// attack when it was not (the clip then waits for it), nil when nothing was to be done.
    public func duck(for entry: QueueEntry) async -> Duration? {
        let silencing = entry.alert != nil && !silenced
        if entry.alert != nil { silenced = true }
        guard let settings = settings(for: entry) else { return nil }
        heldRaise?.cancel()
        heldRaise = nil
        switch phase {
        case .low, .lowering:
            // Low for a clip when an alert cuts in: on down to silence.
            if silencing { await deepen(over: settings.attack) }
            return nil
        case .raising:
            // Back down from wherever the raising got to; the levels to go back to are saved.
            work?.cancel()
            if silencing { toSilence() }
            let records = records
            if let makeTarget {
                work = Task {
                    // A raising may have let go of its claims on finding another's.
                    await self.holdClaims(records, makeTarget: makeTarget)
                    await self.rampStarting(records)
                    let ends = await self.ramp(records, down: true, over: settings.attack, makeTarget: makeTarget)
                    await self.rampEnded(ends, down: true)
                }
            }
            phase = .low
            events?.publish(.ducked(records.map(\.player)))
        case .idle:
            phase = .lowering
            lowerings += 1
            await lower(settings, as: lowerings)
        }
        return settings.attack
    }

    /// The clip ended and was heard to its last sample. With another waiting, the music stays
    /// low; else the players go back up over `release`.
    public func clipEnded(anotherWaits: Bool) async {
        guard !anotherWaits, phase == .low || phase == .lowering else { return }
        // A gap shorter than `release` is not a gap: with a clip due that soon, the music
        // stays low for it (and comes up if it does not start after all).
        if let next = await nextStart?(), case let gap = next - time.wallClock(), gap >= 0, gap < release.secondsDouble {
            let clock = time.clock
            heldRaise = Task {
                guard (try? await clock.sleep(for: .seconds(gap) + release)) != nil else { return }
                self.raiseNow()
            }
            return
        }
        raiseNow()
    }

    /// Playback paused: the music comes back up while nothing sounds.
    public func paused() {
        guard phase == .low || phase == .lowering else { return }
        heldRaise?.cancel()
        heldRaise = nil
        raiseNow()
    }

    /// Raises the players now, over `release`.
    func raiseNow() {
        heldRaise = nil
        guard phase == .low || phase == .lowering else { return }
        silenced = false
        guard !records.isEmpty, let makeTarget else {
            // Nothing to raise (only Home Assistant's sensor follows): ducking is over.
            phase = .idle
            events?.publish(.restored([]))
            return
        }
        let lowering = work
        phase = .raising
        let records = records
        work = Task {
            await lowering?.value
            await self.raise(records, over: release, makeTarget: makeTarget)
        }
    }

    /// The records of players lowered (not paused) go to silence: what an alert lowers them to.
    /// Returns those changed.
    @discardableResult
    func toSilence() -> [DuckRecord] {
        var changed: [DuckRecord] = []
        for index in records.indices where records[index].mode == DuckSettings.Mode.lower.rawValue && (records[index].lowered ?? 0) > 0 {
            records[index].lowered = 0
            records[index].ramping = true
            changed.append(records[index])
        }
        return changed
    }

    /// Players low for a clip go on down to silence over `attack`: an alert cut in. Saved
    /// first, so that a crash midway puts them back.
    func deepen(over attack: Duration) async {
        let deeper = toSilence()
        guard !deeper.isEmpty, let makeTarget else { return }
        try? await save?()
        let lowering = work
        work = Task {
            // The ramp to the clip's level stops where it got to, and this one goes on from there.
            lowering?.cancel()
            await lowering?.value
            let ends = await self.ramp(deeper, down: true, over: attack, makeTarget: makeTarget)
            await self.rampEnded(ends, down: true)
        }
    }

    /// Puts back what a daemon that stopped without doing so left lowered (the state file's
    /// records): each player that still has the level jukeboxd set. A player that does not
    /// answer is tried again in the background until it does.
    public func restore(saved: [DuckRecord]) async {
        let saved = saved.filter { record in
            guard record.target == nil || record.kind == "bed" else { return true }
            logger.warning("duck: the state file's record of a lowered player (\(record.player.isEmpty ? "no name" : record.player)) names no player jukeboxd can reach; it is dropped, and nothing is put back for it")
            return false
        }
        guard !saved.isEmpty else { return }
        records = saved
        phase = .idle
        // Once before any clip starts (a second at most); then in the background.
        await putBackOnce()
        if !records.isEmpty { leftOver = Task { await self.putBackLeftOver() } }
    }

    /// Puts every player back at once (a stop), within a second or two; what does not answer
    /// stays in the state file for the next start.
    public func shutdown() async {
        // A lowering still reading the levels lowers nothing now.
        lowerings += 1
        phase = .idle
        silenced = false
        work?.cancel()
        leftOver?.cancel()
        guard let makeTarget, !records.isEmpty else { return }
        let records = records
        let claimID = claimID
        // This one's claims go first, as at a clip's end, so that of two jukeboxds stopping
        // together one puts the music back.
        for record in records { await dropClaim(record.player) }
        let done = await withTaskGroup(of: DuckRecord?.self) { group in
            for record in records {
                group.addTask {
                    guard let player = record.target else { return record }
                    return (try? await Self.putBack(record, on: makeTarget(player), claimID: claimID)) != nil ? record : nil
                }
            }
            var done: [DuckRecord] = []
            for await record in group { if let record { done.append(record) } }
            return done
        }
        forget(done)
        try? await save?()
    }
}
