import ESPHomeAPI
import JukeboxCore
import JukeboxDispatch
import JukeboxProtocol
import Synchronization

/// Home Assistant's media player commands, each a JSON-RPC request to the same dispatcher as
/// every front end's (client `home-assistant`, shown as "by Home Assistant"): one meaning,
/// one set of checks, and on disk before the next message is read.
struct MediaPlayerCommands: Sendable {
    let dispatcher: RPCDispatcher
    let core: Jukebox
    /// The volume before a mute, for the unmute: one for the device, whichever connection
    /// muted it.
    let savedVolume = SavedVolume()

    static let client = "home-assistant"
    /// How far volume up and down move it, in the core's steps.
    static let volumeStep = 10

    init(core: Jukebox) {
        self.core = core
        dispatcher = RPCDispatcher(core: core, client: Self.client, frontEnd: .esphome)
    }

    /// Carries out one command; the refusal's words, or nil.
    func handle(_ request: ESPMediaPlayerCommandRequest) async -> String? {
        if request.hasVolume_p {
            let level = Double(request.volume) * Double(Jukebox.volumeRange.upperBound)
            guard level.isFinite, level >= 0, level <= Double(Jukebox.volumeRange.upperBound) else {
                return "a volume of \(request.volume), which is not from 0 to 1"
            }
            if let refusal = await setVolume(Int(level.rounded())) { return refusal }
        }
        guard request.hasCommand_p else { return nil }
        switch request.command {
        case .play: return await call("resume")
        case .pause: return await call("pause")
        case .toggle: return await call(await core.snapshot().queue.paused ? "resume" : "pause")
        case .stop: return await call("stop")
        case .mute:
            let volume = await core.snapshot().volume
            guard volume > 0 else { return nil }
            savedVolume.level.withLock { $0 = volume }
            return await setVolume(0)
        case .unmute:
            guard let saved = savedVolume.level.withLock({ saved in defer { saved = nil }; return saved }) else { return nil }
            return await setVolume(saved)
        case .volumeUp, .volumeDown:
            let volume = await core.snapshot().volume + (request.command == .volumeUp ? Self.volumeStep : -Self.volumeStep)
            return await setVolume(min(max(volume, Jukebox.volumeRange.lowerBound), Jukebox.volumeRange.upperBound))
        default:
            return "the command \(request.command), which jukeboxd's media player does not take"
        }
    }

    /// Queues the media at `address` (with `before` as its cue): after what waits, or cutting
    /// in when `now`. The entry's ticket, or the refusal's words.
    func play(_ address: String, before: String? = nil, title: String? = nil, now: Bool) async -> Result<UInt64, RPCDispatcher.Refusal> {
        var params: [String: JSONValue] = ["address": .string(address), "now": .bool(now)]
        if let before { params["before"] = .string(before) }
        if let title { params["title"] = .string(title) }
        switch await dispatcher.call("playAddress", params) {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(let result):
            guard case .object(let fields) = result, case .array(let entries)? = fields["entries"], case .object(let entry)? = entries.first,
                  case .number(let ticket)? = entry["ticket"], ticket >= 0, ticket < 1e15
            else { return .failure(RPCDispatcher.Refusal(message: "the answer named no entry")) }
            return .success(UInt64(ticket))
        }
    }

    private func setVolume(_ level: Int) async -> String? {
        await call("volume", ["level": .number(Double(level))])
    }

    private func call(_ method: String, _ params: [String: JSONValue] = [:]) async -> String? {
        if case .failure(let refusal) = await dispatcher.call(method, params) { return refusal.message }
        return nil
    }
}

/// The volume a mute put aside.
final class SavedVolume: Sendable {
    let level = Mutex<Int?>(nil)
}
