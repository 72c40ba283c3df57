// Claims on players that keep them (`DuckClaims`): how two jukeboxds that duck one MPD know
// the level to go back to, and which of them raises it.
extension Ducker {
    /// Claims each of these players that keeps claims, with its level to go back to, for as
    /// long as its record lasts (`forget` and `dropClaim` end it); one claimed already stays so.
    /// Returns once each player has the claim, or has not taken it within a second.
    func holdClaims(_ lowered: [DuckRecord], makeTarget: @escaping DuckTargetFactory) async {
        let claimID = claimID
        var taken: [AsyncStream<Void>] = []
        for record in lowered where record.mode == DuckSettings.Mode.lower.rawValue && claimsHeld[record.player] == nil {
            guard let player = record.target, let volume = record.volume, let claims = makeTarget(player) as? any DuckClaims else { continue }
            let (claimed, signal) = AsyncStream<Void>.makeStream()
            taken.append(claimed)
            claimsHeld[record.player] = Task {
                // Held again if the player drops it (a restart of MPD), until let go or cancelled.
                while !Task.isCancelled {
                    do {
                        try await claims.holdClaim(level: volume, id: claimID) { signal.finish() }
                        return
                    } catch {
                        signal.finish()
                    }
                    try? await Task.sleep(for: Ducker.retryAfter)
                }
            }
        }
        guard !taken.isEmpty else { return }
        let all = taken
        await withTaskGroup(of: Void.self) { wait in
            wait.addTask { for claimed in all { for await _ in claimed {} } }
            wait.addTask { try? await Task.sleep(for: .seconds(1)) }
            await wait.next()
            wait.cancelAll()
        }
    }

    /// Lets go of the claim held on this player, and returns once the player has dropped it
    /// (or, if it does not answer within a second, once the connection holding it is closed):
    /// another jukeboxd that looks after this finds it gone.
    func dropClaim(_ name: String) async {
        guard let held = claimsHeld.removeValue(forKey: name) else { return }
        if let record = records.first(where: { $0.player == name }), let player = record.target, let volume = record.volume,
            let claims = makeTarget?(player) as? any DuckClaims, (try? await claims.letGo(level: volume, id: claimID)) != nil
        {
            await withTaskGroup(of: Void.self) { wait in
                wait.addTask { await held.value }
                wait.addTask { if (try? await Task.sleep(for: .seconds(1))) != nil { held.cancel() } }
                await wait.next()
                wait.cancelAll()
            }
        }
        held.cancel()
        await held.value
    }
}
