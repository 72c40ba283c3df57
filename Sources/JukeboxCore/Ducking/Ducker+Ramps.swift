#if canImport(Glibc)
import Glibc
#endif

import Logging

// Lowering and raising: the levels read and saved, and the ramps.
extension Ducker {
    // MARK: - Lowering and raising

    /// Whether lowering number `lowering` is still the one wanted: no pause, stop or newer
    /// lowering came while it waited for the players or the disk.
    func stillLowering(_ lowering: Int) -> Bool { phase == .lowering && lowerings == lowering }

    /// Reads every player's level, saves them, and starts the lowering.
    func lower(_ settings: DuckSettings, as lowering: Int) async {
        guard let makeTarget, !settings.players.isEmpty else {
            phase = .low
            events?.publish(.ducked(records.map(\.player)))
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
                        // Another jukeboxd that has it lowered knows the level to go back to;
                        // the level now is that one's lowered level.
                        guard let claims = target as? any DuckClaims else { return (player, try await target.read(), nil, nil) }
                        let (state, theirs) = try await claims.readWithClaims(except: claimID)
                        return (player, state, nil, theirs.max())
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
                // An alert that came while the levels were read lowers to silence.
                let low = Int((Double(volume) * (silenced ? 0 : settings.level)).rounded())
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
            events?.publish(.ducked(records.map(\.player)))
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
        // Claimed before the clip starts, so that another jukeboxd whose clip ends meanwhile
        // leaves the music low for this one.
        await holdClaims(lowered, makeTarget: makeTarget)
        guard stillLowering(lowering) else {
            // Paused while the levels were saved: they are taken off the state again, unlowered.
            forget(lowered)
            try? await save?()
            return
        }
        events?.publish(.ducked(records.map(\.player)))
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
    func rampEnded(_ ends: [(record: DuckRecord, end: RampEnd)], down: Bool) async {
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
    func keepChanged(_ ends: [(record: DuckRecord, end: RampEnd)], down: Bool) -> [DuckRecord] {
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
    func rampStarting(_ starting: [DuckRecord]) async {
        let names = Set(starting.map(\.player))
        var changed = false
        for index in records.indices where names.contains(records[index].player) && records[index].mode == DuckSettings.Mode.lower.rawValue && records[index].ramping != true {
            records[index].ramping = true
            changed = true
        }
        if changed { try? await save?() }
    }

    /// Moves each player from its level to the lowered one (or back), in steps, over `length`;
    /// how it ended for each. Each step that changes the level looks at it first (in the same
    /// round trip, where the player allows): one the last step did not set was someone's (they
    /// turned it up or down meanwhile), and the ramp stops there.
    func ramp(
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
                            let levels = (1...steps).map { Self.level(from: from, to: to, at: Double($0) / Double(steps)) }
                            // Each step after the first looks first: a level the last step did
                            // not set is someone's, and the ramp stops there.
                            if let found = try await target.ramp(from: from, through: levels, every: Self.step, clock: clock) {
                                return .changed(found)
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
    func raise(_ raising: [DuckRecord], over release: Duration, makeTarget: @escaping DuckTargetFactory) async {
        var ours: [DuckRecord] = [], kept: [DuckRecord] = [], unreachable: [DuckRecord] = [], shared: [DuckRecord] = []
        for record in raising {
            guard let player = record.target else { continue }
            do {
                let target = makeTarget(player)
                let state: DuckTargetState
                if let claims = target as? any DuckClaims {
                    // Another jukeboxd still has it lowered: that one raises it when its clip
                    // ends. This one's claim goes first, and the player is asked again once it
                    // has dropped it, so that of two whose clips end together one always raises.
                    var (now, others) = try await claims.readWithClaims(except: claimID)
                    if !others.isEmpty {
                        await dropClaim(record.player)
                        (now, others) = try await claims.readWithClaims(except: claimID)
                        if !others.isEmpty {
                            shared.append(record)
                            continue
                        }
                    }
                    state = now
                } else {
                    state = try await target.read()
                }
                if record.isOurs(state) { ours.append(record) } else { kept.append(record) }
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
        // Claimed while it rises, so that another jukeboxd lowering it meanwhile learns the
        // level it goes back to.
        await holdClaims(ours, makeTarget: makeTarget)
        await rampStarting(ours)
        if Task.isCancelled { return }
        let ends = await ramp(ours, down: false, over: release, makeTarget: makeTarget)
        if Task.isCancelled { return }
        let theirs = keepChanged(ends, down: false)
        // Those that failed part-way stay, `ramping`, and are put back in the background.
        let failed = Set(ends.filter { $0.end == .failed }.map(\.record.player))
        let back = ours.filter { !failed.contains($0.player) && !theirs.contains($0) }
        // Its claim is gone from the player before it counts as restored, and only once the
        // level is back: another jukeboxd lowering it meanwhile learns that level from the claim.
        for record in back { await dropClaim(record.player) }
        forget(back)
        phase = .idle
        try? await save?()
        events?.publish(.restored((back + kept + theirs + shared).map(\.player)))
        if !unreachable.isEmpty || !failed.isEmpty { leftOver = Task { await self.putBackLeftOver() } }
    }
}
