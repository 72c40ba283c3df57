/// A change to the session file made through the API. Values are given as the file writes
/// them (JSON), so every check is the session loader's, exactly as for a hand-written file.
public enum SessionEdit: Sendable, Equatable {
    /// A new clip: `file` (inside the clips folder) plus any of `id`, `title`, `weight`,
    /// `gain`, `windows`, `at`, `dates`, `except`, `enabled`.
    case addClip([String: JSONValue])
    /// Changes the given fields of a clip. `null` returns a field to its default, and
    /// `windows: []` means always.
    case updateClip(id: String, [String: JSONValue])
    /// Removes a clip; with `deleteFile`, its file too if nothing else uses it.
    case removeClip(id: String, deleteFile: Bool)
    /// Changes session-wide fields. `null` returns a field to its default (no `duration`:
    /// forever; no `cue`: none), and `activeHours: []` means always.
    case updateSchedule([String: JSONValue])

    /// The fields each edit may name.
    public static let scheduleFields = [
        "interval", "activeHours", "duration", "cue", "volume", "maxVolume", "name", "leadIn", "fade", "keepDeviceOpen", "location", "holidays",
        "quiet", "atGrace",
    ]

    var command: StateChange {
        switch self {
        case .addClip: .addClip
        case .updateClip: .updateClip
        case .removeClip: .removeClip
        case .updateSchedule: .updateSchedule
        }
    }
}

/// What an edit did: the session's new revision, the clip it concerned as `clips` shows it
/// (absent after a removal), and whether a removed clip's file was deleted.
public struct SessionEdited: Sendable {
    public var revision: String
    public var clip: JukeboxSnapshot.ClipState?
    public var fileDeleted: Bool
    /// Why a file asked to be deleted was kept.
    public var fileKept: String?
}
