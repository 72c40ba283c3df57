@testable import JukeboxCore
import JukeboxCoreTestSupport
import JukeboxTestSupport
import Synchronization
import Testing

/// One player two jukeboxds duck, keeping claims as MPD does: a claim lasts while its holder's
/// connection does. A holder let go (`letGo`) drops its claim before it returns; a holder
/// cancelled closes its connection, which the player notices only when the test says
/// (`noticeClosedConnections`), as MPD does a moment later.
final class SharedPlayer: Sendable {
    struct State {
        var volume = 80
        var claims: [String: Int] = [:]
        /// Holders waiting for `letGo`, by id.
        var holders: [String: CheckedContinuation<Void, Never>] = [:]
        /// Claims whose connection is closed but not yet noticed.
        var closing: Set<String> = []
        /// While not nil, `claims(except:)` waits here until this many are waiting.
        var queries: (count: Int, waiting: [CheckedContinuation<Void, Never>])?
    }

    let state = Mutex(State())
    var volume: Int { state.withLock { $0.volume } }
    var claimed: [Int] { state.withLock { $0.claims.values.sorted() } }

    func noticeClosedConnections() {
        state.withLock { state in
            for id in state.closing { state.claims[id] = nil }
            state.closing = []
        }
    }

    /// The next `count` queries of the claims wait until all of them are asked: jukeboxds
    /// whose clips end at the same moment.
    func askTogether(_ count: Int) { state.withLock { $0.queries = (count, []) } }

    struct Target: DuckTarget, DuckClaims {
        let player: SharedPlayer

        func read() async throws -> DuckTargetState { DuckTargetState(volume: player.volume, playing: true) }
        func setVolume(_ percent: Int) async throws { player.state.withLock { $0.volume = percent } }
        func setPaused(_ paused: Bool) async throws {}

        func claims(except id: String) async throws -> [Int] {
            await withCheckedContinuation { (asked: CheckedContinuation<Void, Never>) in
                let all = player.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    guard var queries = state.queries else { return [asked] }
                    queries.waiting.append(asked)
                    guard queries.waiting.count == queries.count else {
                        state.queries = queries
                        return []
                    }
                    state.queries = nil
                    return queries.waiting
                }
                for waiting in all { waiting.resume() }
            }
            return player.state.withLock { $0.claims.filter { $0.key != id }.map(\.value) }
        }

        func readWithClaims(except id: String) async throws -> (state: DuckTargetState, claims: [Int]) {
            let claims = try await claims(except: id)
            return (try await read(), claims)
        }

        func holdClaim(level: Int, id: String, taken: @escaping @Sendable () -> Void) async throws {
            player.state.withLock { $0.claims[id] = level }
            taken()
            await withTaskCancellationHandler {
                await withCheckedContinuation { (letGo: CheckedContinuation<Void, Never>) in
                    let cancelled = player.state.withLock { state -> Bool in
                        guard !state.closing.contains(id) else { return true }
                        state.holders[id] = letGo
                        return false
                    }
                    if cancelled { letGo.resume() }
                }
            } onCancel: {
                let holder = player.state.withLock { state -> CheckedContinuation<Void, Never>? in
                    state.closing.insert(id)
                    return state.holders.removeValue(forKey: id)
                }
                holder?.resume()
            }
        }

        func letGo(level: Int, id: String) async throws {
            let holder = player.state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let holder = state.holders.removeValue(forKey: id) else { return nil }
                state.claims[id] = nil
                return holder
            }
            guard let holder else { throw NotHeld() }
            holder.resume()
        }
    }

    struct NotHeld: Error {}
}

@Suite("Two jukeboxds ducking one player", .timeLimit(.minutes(1)))
struct DuckClaimTests {
    static let player = DuckSettings.Player.mpd(.unix(path: "/run/mpd/socket"), passwordFile: nil)

    func ducker(_ player: SharedPlayer) -> Ducker {
        var session = Session(name: "t", sourcePath: "/clips/s.json", clipsDirectory: "/clips", clips: [])
        session.duck = DuckSettings(level: 0.25, attack: .zero, release: .zero, mode: .lower, players: [Self.player])
        return Ducker(schedule: ScheduleBoard(session), makeTarget: { _ in SharedPlayer.Target(player: player) }, events: EventBus(), time: TimeSource(wallClock: { 1_000 }), logger: .quiet)
    }

    func entry() -> QueueEntry { QueueEntry(ticket: 1, clip: Fixtures.clip("bell"), origin: .scheduler) }

    func settled(_ ducker: Ducker) async {
        while true {
            let (ducked, ducking) = (await ducker.ducked, await ducker.isDucking)
            if ducked.isEmpty && !ducking { return }
            if Task.isCancelled { return }
            await Task.yield()
        }
    }

    /// Waits (yielding) until `condition` holds; a test whose condition never comes fails at
    /// its time limit.
    func until(_ condition: () -> Bool) async {
        while !condition(), !Task.isCancelled { await Task.yield() }
        #expect(condition())
    }

    /// Both lowered, the second from the first's claim (80, not the 20 it finds).
    func bothLowered(_ player: SharedPlayer) async -> (Ducker, Ducker) {
        let (first, second) = (ducker(player), ducker(player))
        await first.clipStarting(entry(), leadIn: .zero)
        await until { player.volume == 20 }
        await second.clipStarting(entry(), leadIn: .zero)
        #expect(player.claimed == [80, 80], "each claims the level to go back to, 80")
        return (first, second)
    }

    @Test func theOneWhoseClipEndsFirstIsGoneFromThePlayerBeforeTheOtherLooks() async {
        let player = SharedPlayer()
        let (first, second) = await bothLowered(player)
        await second.clipEnded(anotherWaits: false)
        await settled(second)
        #expect(player.volume == 20, "left low for the first, whose clip still sounds")
        #expect(player.claimed == [80], "the second's claim is gone, and the player has said so")
        // The first's clip ends at once, before the player would notice a closed connection.
        await first.clipEnded(anotherWaits: false)
        await settled(first)
        #expect(player.volume == 80, "the last to end raises the music")
        player.noticeClosedConnections()
        #expect(player.claimed.isEmpty)
    }

    @Test func ofTwoWhoseClipsEndTogetherOneRaisesTheMusic() async {
        let player = SharedPlayer()
        let (first, second) = await bothLowered(player)
        // Each looks while the other's claim is still there.
        player.askTogether(2)
        async let firstEnds: Void = first.clipEnded(anotherWaits: false)
        async let secondEnds: Void = second.clipEnded(anotherWaits: false)
        _ = await (firstEnds, secondEnds)
        await settled(first)
        await settled(second)
        #expect(player.volume == 80, "one of them raises the music")
        player.noticeClosedConnections()
        #expect(player.claimed.isEmpty)
    }
}
