#if canImport(Glibc)
import Glibc
#endif

import Logging

// Putting players back: after a raising that could not reach them, after a restart (the state
// file's records), and at a stop; and the players that are away, tried again in the background.
extension Ducker {
    /// Puts back the records no clip is using, trying each player again every few seconds
    /// until it answers.
    func putBackLeftOver() async {
        while !Task.isCancelled, phase == .idle, !records.isEmpty {
            try? await time.clock.sleep(for: Self.retryAfter)
            guard !Task.isCancelled, phase == .idle else { return }
            await putBackOnce()
        }
    }

    /// Tries once to put back every record, all players at once.
    func putBackOnce() async {
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
        events?.publish(.restored(done.map(\.player)))
    }

    struct PutBackFailure: Error { var description: String }

    /// Sets a player back as the record says, if it still has the level jukeboxd set; returns
    /// whether it did.
    static func putBack(_ record: DuckRecord, on target: any DuckTarget, claimID: String) async throws -> Bool {
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

    func forget(_ done: [DuckRecord]) {
        let names = Set(done.map(\.player))
        records.removeAll { names.contains($0.player) }
        for name in names { claimsHeld.removeValue(forKey: name)?.cancel() }
    }

    /// Logged once while the player stays away.
    func wentAway(_ name: String, _ problem: String) {
        if away[name] == nil {
            logger.warning("duck: \(name) did not answer (\(problem)); it is tried again in the background, and no clip waits for it", metadata: ["player": "\(name)"])
        }
        away[name] = time.wallClock()
    }

    func cameBack(_ name: String) {
        guard away.removeValue(forKey: name) != nil else { return }
        logger.notice("duck: \(name) answers again", metadata: ["player": "\(name)"])
    }
}
