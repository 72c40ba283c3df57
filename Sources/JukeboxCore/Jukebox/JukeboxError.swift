/// Why the core refused a command, or could not make it durable. Each case maps to one
/// stable reason on every front end (`unknown-clip`, `queue-full`…); `description` is for
/// people and says what was wrong and what to do.
public enum JukeboxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No clip of that id, and no file of that name in the clips folder.
    case unknownClip(String, suggestions: [String])
    /// A path that leads outside the session's clips folder.
    case outsideClipsDirectory(String)
    /// The clip exists but cannot be decoded; the reason names the file.
    case unplayable(String, reason: String)
    case queueFull(QueueFullError)
    /// The change was applied in memory but the state file could not be written.
    case stateNotSaved(reason: String)
    /// A reload found problems: one line each, `file:line: field: what is wrong`.
    case sessionInvalid(problems: [String])
    /// A parameter out of its range, named in the message.
    case invalidParameter(String)
    /// An edit would make the session invalid: one line per problem. Nothing was changed.
    case editInvalid(problems: [String])
    /// The session file changed on disk since the daemon read it (someone edited it by
    /// hand): an edit through the API would overwrite that.
    case sessionChangedOnDisk(path: String)
    /// The edit named the revision it was made against, and the session has moved on.
    case revisionMismatch(given: String, current: String)
    /// The edited session file could not be written; the running session is unchanged.
    case sessionNotSaved(reason: String)
    /// An upload larger than the session's `maxUploadSize`; refused before any byte is stored.
    case uploadTooLarge(name: String, size: Int, limit: Int)
    /// An upload that could not be received or stored; nothing of it was kept.
    case uploadRefused(String)
    /// `limit` uploads are being received or converted already; try again after `retryAfter` seconds.
    case uploadsBusy(limit: Int, retryAfter: Int)
    /// `jukebox test`: the device could not be opened or played; the error says why, with
    /// what to do.
    case soundTestFailed(AudioDeviceError)
    /// `jukebox test DEVICE` from a client, with a name that is not opened for clients
    /// (`ClientDeviceName`): `reason` says why.
    case deviceRefused(device: String, reason: String)
    /// Another sound test is running, or its device has not answered yet.
    case soundTestBusy
    /// A stop began while the request waited; nothing more will be done for it.
    case stopping

    public var description: String {
        switch self {
        case .unknownClip(let name, let suggestions):
            let hint = suggestions.isEmpty ? " (`jukebox clips` lists them)" : " (did you mean \(suggestions.map { "\"\($0)\"" }.joined(separator: " or "))?)"
            return "no clip \"\(name)\" in the session\(hint)"
        case .outsideClipsDirectory(let path):
            return "\"\(path)\" is outside the session's clips folder; only clips inside it can be played"
        case .unplayable(let name, let reason):
            return "clip \"\(name)\" cannot be played: \(reason)"
        case .queueFull(let error):
            return "\(error)"
        case .stateNotSaved(let reason):
            return "the change was made but could not be saved, so it would not survive a restart: \(reason)"
        case .sessionInvalid(let problems):
            return "the session file was not reloaded; the running session is unchanged:\n" + problems.joined(separator: "\n")
        case .invalidParameter(let message):
            return message
        case .editInvalid(let problems):
            return "the edit was not made; the session is unchanged:\n" + problems.joined(separator: "\n")
        case .sessionChangedOnDisk(let path):
            return "\(path) was changed on disk since jukeboxd read it; run `jukebox reload` to take those changes in (or undo them), then edit again"
        case .uploadTooLarge(let name, let size, let limit):
            return "\(name) is \(size) bytes, more than the \(limit) an upload may be (the session's maxUploadSize)"
        case .uploadRefused(let message):
            return message
        case .uploadsBusy(let limit, let retryAfter):
            return "\(limit) uploads are being received or converted, the most at once; nothing of this one was kept: send it again in \(retryAfter) s"
        case .sessionNotSaved(let reason):
            return "the edit was not saved, so it was not made, and the session file is unchanged: \(reason)"
        case .soundTestFailed(let error):
            return "the test tone was not played: \(error)"
        case .deviceRefused(let device, let reason):
            return "jukeboxd does not open \"\(device)\" for a client: \(reason). Test a device `aplay -L` lists, such as plughw:CARD=Device,DEV=0, or make it the session's device"
        case .soundTestBusy:
            return "another sound test is running, or its device has not answered yet; try again once it has"
        case .stopping:
            return "jukeboxd is stopping, so the request was not finished; send it again once jukeboxd is back"
        case .revisionMismatch(let given, let current):
            return "the session has changed since revision \(given) (it is now \(current)); look at it again (`jukebox session`) and redo the edit"
        }
    }
}
