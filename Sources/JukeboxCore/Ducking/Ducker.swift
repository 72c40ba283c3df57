#if canImport(Glibc)
import Glibc
#endif

import Logging

/// A player in the house that jukeboxd lowers while a clip sounds (MPD, a snapclient): read
/// its level, set it, pause it. Each call answers or throws within a second or so; the daemon's
/// are in JukeboxDuck.
public protocol DuckTarget: Sendable {
    func read() async throws -> DuckTargetState
    func setVolume(_ percent: Int) async throws
    func setPaused(_ paused: Bool) async throws
    /// Runs `body` with the player reached over one connection, kept open for at most
    /// `length` and a second: a ramp's twenty steps a second, rather than a connection each.
    func withConnection<T: Sendable>(for length: Duration, _ body: @escaping @Sendable (any DuckTarget) async throws -> T) async throws -> T
}

extension DuckTarget {
    /// Each call on its own: for players whose calls are cheap, or batched elsewhere.
    public func withConnection<T: Sendable>(for length: Duration, _ body: @escaping @Sendable (any DuckTarget) async throws -> T) async throws -> T {
        try await body(self)
    }
}

/// A player that jukeboxds sharing it coordinate through: each that has it lowered holds a
/// claim on the player itself, naming the level to go back to (MPD: a channel its connection
/// subscribes to, which MPD forgets when the connection goes, so a crash leaves no claim).
/// Two daemons on one Pi, each with its own card and room, may duck the same MPD.
public protocol DuckClaims: Sendable {
    /// The levels to go back to that other jukeboxds (not `id`) claim now.
    func claims(except id: String) async throws -> [Int]
    /// Claims the player for `id`, with the level to go back to, until the task is cancelled
    /// (or the player goes).
    func holdClaim(level: Int, id: String) async throws
}

/// A player's volume (0–100; nil when it has none that can be set) and whether it is playing.
public struct DuckTargetState: Sendable, Equatable {
    public var volume: Int?
    public var playing: Bool
    public init(volume: Int?, playing: Bool) {
        self.volume = volume
        self.playing = playing
    }
}

/// Builds the connection to one of the session's players (the daemon's speaks MPD's protocol
/// and snapserver's JSON-RPC; tests pass their own).
public typealias DuckTargetFactory = @Sendable (DuckSettings.Player) -> any DuckTarget

/// One player jukeboxd has lowered or paused, as the state file keeps it: on disk before the
/// player is touched, so that whatever happens to the daemon, the next start puts it back.
public struct DuckRecord: Codable, Sendable, Equatable {
    /// `DuckSettings.Player.description`: how the log and `status` name it.
    public var player: String
    /// `mpd` or `snapclient`.
    public var kind: String
    /// MPD's address, or snapserver's.
    public var address: String
    public var client: String?
    public var passwordFile: String?
    /// `lower` or `pause`.
    public var mode: String
    /// Its volume before (lower), and the volume jukeboxd lowers it to.
    public var volume: Int?
    public var lowered: Int?
    /// true while a ramp between the two is under way: a player found anywhere between them
    /// after a crash then was left there by jukeboxd, not by someone.
    public var ramping: Bool?

    public init(_ player: DuckSettings.Player, mode: DuckSettings.Mode, volume: Int?, lowered: Int?, ramping: Bool? = nil) {
        self.ramping = ramping
        self.player = player.description
        switch player {
        case .mpd(let address, let passwordFile):
            (kind, self.address, client, self.passwordFile) = ("mpd", address.description, nil, passwordFile)
        case .snapclient(let server, let client):
            (kind, self.address, self.client, passwordFile) = ("snapclient", server.description, client, nil)
        }
        self.mode = mode.rawValue
        self.volume = volume
        self.lowered = lowered
    }

    private enum CodingKeys: String, CodingKey { case player, kind, address, client, passwordFile, mode, volume, lowered, ramping }

    /// Read leniently: the state file may have been edited by hand. A level is held to 0–100
    /// (a level out of range, or not a number, is none), and a record with fields missing is
    /// read as far as it goes: `Ducker.restore` drops one that names no player, with a
    /// warning, rather than the whole state being set aside.
    public init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys) -> String? { (try? fields.decodeIfPresent(String.self, forKey: key)) ?? nil }
        func level(_ key: CodingKeys) -> Int? {
            guard let value = (try? fields.decodeIfPresent(Double.self, forKey: key)) ?? nil, value.isFinite else { return nil }
            return Int(min(max(value, 0), 100).rounded())
        }
        player = text(.player) ?? ""
        kind = text(.kind) ?? ""
        address = text(.address) ?? ""
        client = text(.client)
        passwordFile = text(.passwordFile)
        mode = text(.mode) ?? DuckSettings.Mode.lower.rawValue
        volume = level(.volume)
        lowered = level(.lowered)
        ramping = (try? fields.decodeIfPresent(Bool.self, forKey: .ramping)) ?? nil
    }

    /// The player it names, to reach it again after a restart.
    public var target: DuckSettings.Player? {
        let port = kind == "mpd" ? DuckSettings.defaultMPDPort : DuckSettings.defaultSnapcastPort
        guard let address = DuckSettings.Address.parse(address, defaultPort: port) else { return nil }
        switch kind {
        case "mpd": return .mpd(address, passwordFile: passwordFile)
        case "snapclient": return client.map { .snapclient(server: address, client: $0) }
        default: return nil
        }
    }

    /// Whether `state` is what jukeboxd set the player to (paused, or the lowered level; any
    /// level between it and the one before while a ramp was under way): anything else is
    /// someone's own change since, which is kept.
    func isOurs(_ state: DuckTargetState) -> Bool {
        if mode == DuckSettings.Mode.pause.rawValue { return !state.playing }
        guard let now = state.volume, let lowered else { return false }
        if ramping == true, let volume { return (min(volume, lowered)...max(volume, lowered)).contains(now) }
        return now == lowered
    }
}

/// Lowers the session's other players (`duck`) while clips sound and puts them back after:
/// the one owner of what is ducked, and the one publisher of `ducked` and `restored`.
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

    private let schedule: ScheduleBoard
    private let makeTarget: DuckTargetFactory?
    private let events: EventBus
    private let time: TimeSource
    private let logger: Logger
    /// Saves the state (and returns once it is on disk); set once the state writer exists.
    private var save: (@Sendable () async throws -> Void)?
    /// When something next plays by itself (a fixed time, the next pick), in seconds since the
    /// epoch: a clip due within `release` of the last one's end keeps the music low.
    private var nextStart: (@Sendable () async -> Double?)?
    /// The raising that waits for a clip due soon, in case it does not come.
    private var heldRaise: Task<Void, Never>?
    /// What is lowered or paused now, and what to put back.
    public private(set) var records: [DuckRecord] = []
    private var phase = Phase.idle
    /// Counts the lowerings begun: one that finds, after reading the levels or saving them,
    /// that a pause or a stop came meanwhile (and perhaps a resume began another) lowers
    /// nothing, so the music is never left low with no clip sounding.
    private var lowerings = 0
    /// The lowering or raising under way.
    private var work: Task<Void, Never>?
    /// Records a restart left to put back, tried until each player answers.
    private var leftOver: Task<Void, Never>?
    /// Players that did not answer lately, by name, and when: skipped until a retry reaches them.
    private var away: [String: Double] = [:]
    /// The claims held on players that keep them (`DuckClaims`), by player.
    private var claimsHeld: [String: Task<Void, Never>] = [:]
    /// How other jukeboxds know this one's claims from their own: the process and a random part.
    let claimID = "\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"

    /// How often a ramp sets the level (20 steps a second).
    static let step: Duration = .milliseconds(50)
    /// How long a player that did not answer is left alone before it is tried again.
    static let retryAfter: Duration = .seconds(5)

    public init(schedule: ScheduleBoard, makeTarget: DuckTargetFactory?, events: EventBus, time: TimeSource, logger: Logger) {
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
    private var release: Duration { schedule.current.session.duck?.release ?? DuckSettings.defaultRelease }

    /// Whether a clip that ducks sounds now (or the players are on their way down): Home
    /// Assistant's Ducking sensor, for its own media players, even with no player named here.
    public var isDucking: Bool { phase == .lowering || phase == .low }

    /// A clip is about to start: lowers the players unless they are low already, and returns
    /// once the music will be low by the time the clip is heard (`leadIn` plays first).
    public func clipStarting(_ entry: QueueEntry, leadIn: Duration) async {
        guard let settings = await duck(for: entry) else { return }
        let wait = settings.attack - leadIn
        if wait > .zero { try? await time.clock.sleep(for: wait) }
    }

    /// Playback resumed with `entry` mid-way: the players go down again (the clip fades in
    /// meanwhile; it does not wait).
    public func resumed(_ entry: QueueEntry) async {
        _ = await duck(for: entry)
    }

    /// Lowers the players for `entry` unless they are low already; returns the settings when
    /// they were not (the clip then waits for the attack), nil when nothing was to be done.
    private func duck(for entry: QueueEntry) async -> DuckSettings? {
        guard let settings = schedule.current.session.duck, ducks(entry) else { return nil }
        heldRaise?.cancel()
        heldRaise = nil
        switch phase {
        case .low, .lowering:
            return nil
        case .raising:
            // Back down from wherever the raising got to; the levels to go back to are saved.
            work?.cancel()
            let records = records
            if let makeTarget {
                work = Task {
                    await self.rampStarting(records)
                    let ends = await self.ramp(records, down: true, over: settings.attack, makeTarget: makeTarget)
                    await self.rampEnded(ends, down: true)
                }
            }
            phase = .low
            events.publish(.ducked(records.map(\.player)))
        case .idle:
            phase = .lowering
            lowerings += 1
            await lower(settings, as: lowerings)
        }
        return settings
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
    private func raiseNow() {
        heldRaise = nil
        guard phase == .low || phase == .lowering else { return }
        guard !records.isEmpty, let makeTarget else {
            // Nothing to raise (only Home Assistant's sensor follows): ducking is over.
            phase = .idle
            events.publish(.restored([]))
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

    /// Puts back what a daemon that stopped without doing so left lowered (the state file's
    /// records): each player that still has the level jukeboxd set. A player that does not
    /// answer is tried again in the background until it does.
    public func restore(saved: [DuckRecord]) async {
        let saved = saved.filter { record in
            guard record.target == nil else { return true }
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
        work?.cancel()
        leftOver?.cancel()
        guard let makeTarget, !records.isEmpty else { return }
        let records = records
        let claimID = claimID
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

    // MARK: - Lowering and raising

    /// Whether this clip lowers the others: announcements do; a session clip unless it says
    /// `"duck": false`.
    private func ducks(_ entry: QueueEntry) -> Bool {
        guard entry.clip.speech == nil else { return true }
        return schedule.current.session.clips.first { $0.id == entry.clip.id }?.ducks ?? true
    }

    /// Whether lowering number `lowering` is still the one wanted: no pause, stop or newer
    /// lowering came while it waited for the players or the disk.
    private func stillLowering(_ lowering: Int) -> Bool { phase == .lowering && lowerings == lowering }

    /// Reads every player's level, saves them, and starts the lowering.
    private func lower(_ settings: DuckSettings, as lowering: Int) async {
        guard let makeTarget, !settings.players.isEmpty else {
            phase = .low
            events.publish(.ducked(records.map(\.player)))
            return
        }
        let players = settings.players.filter { player in
            guard let since = away[player.description] else { return true }
            return time.wallClock() - since >= Self.retryAfter.secondsDouble
        }
        let claimID = claimID
        let read = await withTaskGroup(of: (DuckSettings.Player, DuckTargetState?, String?, Int?).self) { group in
            for player in players {
                group.addTask {
                    do {
                        let target = makeTarget(player)
                        let state = try await target.read()
                        // Another jukeboxd that has it lowered knows the level to go back to;
                        // the level now is that one's lowered level.
                        let theirs = try await (target as? any DuckClaims)?.claims(except: claimID).max()
                        return (player, state, nil, theirs)
                    } catch {
                        return (player, nil, "\(error)", nil)
                    }
                }
            }
            var read: [(DuckSettings.Player, DuckTargetState?, String?, Int?)] = []
            for await answer in group { read.append(answer) }
            return read
        }
        // Paused (or stopped) while the levels were read: nothing has been touched yet.
        guard stillLowering(lowering) else { return }
        var lowered: [DuckRecord] = []
        for (player, state, problem, claimed) in read {
            guard let state else {
                wentAway(player.description, problem ?? "no answer")
                continue
            }
            cameBack(player.description)
            // A record left from before (a player that was away when the daemon started):
            // still at jukeboxd's level, it is low already; else it is someone's level now.
            if let old = records.first(where: { $0.player == player.description }) {
                if old.isOurs(state) { continue }
                forget([old])
            }
            switch settings.mode {
            case .lower:
                guard let current = state.volume else {
                    logger.warning("duck: \(player) has no volume jukeboxd can set (MPD without a mixer: set mixer_type \"software\" in its audio_output); it is not lowered", metadata: ["player": "\(player)"])
                    continue
                }
                if let claimed {
                    logger.info("duck: \(player) is lowered by another jukeboxd too; the level to go back to is the one it keeps, \(claimed)", metadata: ["player": "\(player)"])
                }
                let volume = claimed ?? current
                let low = Int((Double(volume) * settings.level).rounded())
                guard low < volume else { continue }
                lowered.append(DuckRecord(player, mode: .lower, volume: volume, lowered: low, ramping: true))
            case .pause:
                guard state.playing else { continue }
                lowered.append(DuckRecord(player, mode: .pause, volume: nil, lowered: nil))
            }
        }
        records += lowered
        guard !lowered.isEmpty else {
            phase = .low
            events.publish(.ducked(records.map(\.player)))
            return
        }
        do {
            try await save?()
        } catch {
            // Without the levels on disk a crash could leave the music low for good.
            logger.warning("duck: the levels to put back could not be saved (\(error)); the other players are not lowered")
            forget(lowered)
            if stillLowering(lowering) { phase = .idle }
            return
        }
        guard stillLowering(lowering) else {
            // Paused while the levels were saved: they are taken off the state again, unlowered.
            forget(lowered)
            try? await save?()
            return
        }
        events.publish(.ducked(records.map(\.player)))
        holdClaims(lowered, makeTarget: makeTarget)
        let attack = settings.attack
        work = Task {
            let ends = await self.ramp(lowered, down: true, over: attack, makeTarget: makeTarget)
            await self.rampEnded(ends, down: true)
        }
        phase = .low
    }

    /// How a ramp ended for one player.
    enum RampEnd: Sendable, Equatable {
        /// It reached its level.
        case done
        /// The player stopped answering part-way: it is somewhere between the two levels,
        /// and its record stays `ramping`, so it is put back from anywhere between.
        case failed
        /// Someone set it to this level, which no step had set, part-way: it is theirs.
        case changed(Int)
        /// The ramp was cut short by another (a clip starting while it rose, a stop).
        case cancelled
    }

    /// The ramps for these records are over. Those that reached their level count as ours
    /// from now on only at that exact level; one someone changed part-way is theirs and is
    /// forgotten; one that failed stays `ramping`. Saved, so that a crash from here on is
    /// judged by it.
    private func rampEnded(_ ends: [(record: DuckRecord, end: RampEnd)], down: Bool) async {
        guard !Task.isCancelled else { return }
        let done = Set(ends.filter { $0.end == .done }.map(\.record.player))
        var changed = false
        for index in records.indices where done.contains(records[index].player) && records[index].ramping == true {
            records[index].ramping = nil
            changed = true
        }
        let theirs = keepChanged(ends, down: down)
        if changed || !theirs.isEmpty { try? await save?() }
    }

    /// Forgets the records whose player someone set part-way through a ramp, saying so once
    /// each; returns them.
    private func keepChanged(_ ends: [(record: DuckRecord, end: RampEnd)], down: Bool) -> [DuckRecord] {
        var theirs: [DuckRecord] = []
        for (record, end) in ends {
            guard case .changed(let level) = end else { continue }
            logger.info("duck: \(record.player) was set to \(level) while jukeboxd was \(down ? "lowering" : "raising") it; it is left there", metadata: ["player": "\(record.player)"])
            theirs.append(record)
        }
        forget(theirs)
        return theirs
    }

    /// These records are about to ramp (a raising, or a lowering again): saved first, so that
    /// a crash midway puts them back.
    private func rampStarting(_ starting: [DuckRecord]) async {
        let names = Set(starting.map(\.player))
        var changed = false
        for index in records.indices where names.contains(records[index].player) && records[index].mode == DuckSettings.Mode.lower.rawValue && records[index].ramping != true {
            records[index].ramping = true
            changed = true
        }
        if changed { try? await save?() }
    }

    /// Moves each player from its level to the lowered one (or back), in steps, over `length`;
    /// how it ended for each. Before each step the level is read: one the last step did not
    /// set was someone's (they turned it up or down meanwhile), and the ramp stops there.
    private func ramp(
        _ records: [DuckRecord], down: Bool, over length: Duration, makeTarget: @escaping DuckTargetFactory
    ) async -> [(record: DuckRecord, end: RampEnd)] {
        let clock = time.clock
        return await withTaskGroup(of: (DuckRecord, RampEnd)?.self) { group in
            for record in records {
                guard let player = record.target else { continue }
                let target = makeTarget(player)
                group.addTask {
                    do {
                        if record.mode == DuckSettings.Mode.pause.rawValue {
                            try await target.setPaused(down)
                            return (record, .done)
                        }
                        guard let volume = record.volume, let lowered = record.lowered else { return (record, .done) }
                        // One connection for the whole ramp, where the player keeps one.
                        let end = try await target.withConnection(for: length) { target -> RampEnd in
                            // From where the player is: a raising cut short, or a lowering
                            // that failed part-way, left it between the two levels.
                            let from = try await target.read().volume ?? (down ? volume : lowered)
                            let to = down ? lowered : volume
                            let steps = max(1, Int(length / Self.step))
                            var last = from
                            for step in 1...steps {
                                if Task.isCancelled { return .cancelled }
                                if step > 1, let now = try await target.read().volume, !Self.sameLevel(now, last) { return .changed(now) }
                                let level = Self.level(from: from, to: to, at: Double(step) / Double(steps))
                                if level != last { try await target.setVolume(level) }
                                last = level
                                if step < steps { try await clock.sleep(for: Self.step) }
                            }
                            return .done
                        }
                        return (record, end)
                    } catch is CancellationError {
                        return (record, .cancelled)
                    } catch {
                        await self.wentAway(player.description, "\(error)")
                        return (record, .failed)
                    }
                }
            }
            var ends: [(record: DuckRecord, end: RampEnd)] = []
            for await end in group { if let end { ends.append(end) } }
            return ends
        }
    }

    /// A mixer may read back a level a step from the one set (a hardware mixer's own steps):
    /// that is still ours, and only a level further off is someone's.
    static func sameLevel(_ read: Int, _ set: Int) -> Bool { abs(read - set) <= 1 }

    /// The level a ramp from `from` to `to` sets `fraction` of the way: in equal steps of
    /// decibels (each step the same factor), as the ear hears a fade, rather than of percent,
    /// which would save most of the drop for the last steps. Ends exactly at `to`.
    static func level(from: Int, to: Int, at fraction: Double) -> Int {
        guard fraction < 1 else { return to }
        let (start, end) = (Double(max(from, 1)), Double(max(to, 1)))
        return Int((start * pow(end / start, fraction)).rounded())
    }

    /// Raises the players back (each that still has the level jukeboxd set), forgets them, and
    /// saves. Those that do not answer are tried again in the background.
    private func raise(_ raising: [DuckRecord], over release: Duration, makeTarget: @escaping DuckTargetFactory) async {
        var ours: [DuckRecord] = [], kept: [DuckRecord] = [], unreachable: [DuckRecord] = [], shared: [DuckRecord] = []
        for record in raising {
            guard let player = record.target else { continue }
            do {
                let target = makeTarget(player)
                // Another jukeboxd still has it lowered: that one raises it when its clip ends.
                if let others = try await (target as? any DuckClaims)?.claims(except: claimID), !others.isEmpty {
                    shared.append(record)
                    continue
                }
                if record.isOurs(try await target.read()) { ours.append(record) } else { kept.append(record) }
            } catch {
                wentAway(record.player, "\(error)")
                unreachable.append(record)
            }
        }
        if Task.isCancelled { return }
        for record in kept {
            logger.info("duck: \(record.player) was changed while lowered; it is left as it is", metadata: ["player": "\(record.player)"])
        }
        for record in shared {
            logger.info("duck: \(record.player) is lowered by another jukeboxd too; it is left for that one to raise", metadata: ["player": "\(record.player)"])
        }
        forget(shared)
        // Someone's level is theirs from now on, even if a clip lowers the others again.
        forget(kept)
        await rampStarting(ours)
        if Task.isCancelled { return }
        let ends = await ramp(ours, down: false, over: release, makeTarget: makeTarget)
        if Task.isCancelled { return }
        let theirs = keepChanged(ends, down: false)
        // Those that failed part-way stay, `ramping`, and are put back in the background.
        let failed = Set(ends.filter { $0.end == .failed }.map(\.record.player))
        let back = ours.filter { !failed.contains($0.player) && !theirs.contains($0) }
        forget(back)
        phase = .idle
        try? await save?()
        events.publish(.restored((back + kept + theirs + shared).map(\.player)))
        if !unreachable.isEmpty || !failed.isEmpty { leftOver = Task { await self.putBackLeftOver() } }
    }

    /// Puts back the records no clip is using, trying each player again every few seconds
    /// until it answers.
    private func putBackLeftOver() async {
        while !Task.isCancelled, phase == .idle, !records.isEmpty {
            try? await time.clock.sleep(for: Self.retryAfter)
            guard !Task.isCancelled, phase == .idle else { return }
            await putBackOnce()
        }
    }

    /// Tries once to put back every record, all players at once.
    private func putBackOnce() async {
        guard let makeTarget else { return }
        let claimID = claimID
        let attempts = await withTaskGroup(of: (DuckRecord, Result<Bool, PutBackFailure>).self) { group in
            for record in records {
                group.addTask {
                    guard let player = record.target else { return (record, .success(false)) }
                    do { return (record, .success(try await Self.putBack(record, on: makeTarget(player), claimID: claimID))) } catch {
                        return (record, .failure(PutBackFailure(description: "\(error)")))
                    }
                }
            }
            var attempts: [(DuckRecord, Result<Bool, PutBackFailure>)] = []
            for await attempt in group { attempts.append(attempt) }
            return attempts
        }
        var done: [DuckRecord] = []
        for (record, attempt) in attempts {
            switch attempt {
            case .success(true):
                logger.notice("duck: \(record.player) is back at its level", metadata: ["player": "\(record.player)"])
            case .success(false):
                logger.info("duck: \(record.player) was changed while lowered; it is left as it is", metadata: ["player": "\(record.player)"])
            case .failure(let problem):
                wentAway(record.player, problem.description)
                continue
            }
            cameBack(record.player)
            done.append(record)
        }
        guard !done.isEmpty else { return }
        forget(done)
        try? await save?()
        events.publish(.restored(done.map(\.player)))
    }

    private struct PutBackFailure: Error { var description: String }

    /// Sets a player back as the record says, if it still has the level jukeboxd set; returns
    /// whether it did.
    private static func putBack(_ record: DuckRecord, on target: any DuckTarget, claimID: String) async throws -> Bool {
        // Another jukeboxd has it lowered now: it puts it back when its clip ends.
        if let others = try await (target as? any DuckClaims)?.claims(except: claimID), !others.isEmpty { return true }
        guard record.isOurs(try await target.read()) else { return false }
        if record.mode == DuckSettings.Mode.pause.rawValue {
            try await target.setPaused(false)
        } else if let volume = record.volume {
            try await target.setVolume(volume)
        }
        return true
    }

    private func forget(_ done: [DuckRecord]) {
        let names = Set(done.map(\.player))
        records.removeAll { names.contains($0.player) }
        for name in names { claimsHeld.removeValue(forKey: name)?.cancel() }
    }

    /// Claims each of these players that keeps claims, with its level to go back to, for as
    /// long as its record lasts (`forget` ends it).
    private func holdClaims(_ lowered: [DuckRecord], makeTarget: @escaping DuckTargetFactory) {
        let claimID = claimID
        for record in lowered where record.mode == DuckSettings.Mode.lower.rawValue {
            guard let player = record.target, let volume = record.volume, let claims = makeTarget(player) as? any DuckClaims else { continue }
            claimsHeld[record.player]?.cancel()
            claimsHeld[record.player] = Task {
                // Held again if the player drops it (a restart of MPD), until cancelled.
                while !Task.isCancelled {
                    do { try await claims.holdClaim(level: volume, id: claimID) } catch {}
                    try? await Task.sleep(for: Ducker.retryAfter)
                }
            }
        }
    }

    /// Logged once while the player stays away.
    private func wentAway(_ name: String, _ problem: String) {
        if away[name] == nil {
            logger.warning("duck: \(name) did not answer (\(problem)); it is tried again in the background, and no clip waits for it", metadata: ["player": "\(name)"])
        }
        away[name] = time.wallClock()
    }

    private func cameBack(_ name: String) {
        guard away.removeValue(forKey: name) != nil else { return }
        logger.notice("duck: \(name) answers again", metadata: ["player": "\(name)"])
    }
}
