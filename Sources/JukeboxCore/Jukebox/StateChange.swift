/// The kinds of change a front end can ask of the core. `mustBeDurable` is the one
/// durability rule: a change that must survive a restart is acknowledged to its client only
/// once the state file holds it (`Jukebox.waitUntilDurable`).
public enum StateChange: String, Sendable, CaseIterable {
    case enqueue, say, remove, clear, stop, skip, pause, resume, pick, setVolume, setQuiet, setMusic, setPlan, alert, reload
    case addClip, updateClip, removeClip, updateSchedule

    public var mustBeDurable: Bool {
        switch self {
        case .enqueue, .say, .remove, .clear, .stop, .pause, .resume, .pick, .setVolume, .setQuiet, .setMusic, .setPlan: true
        // An alert is latched: on disk before anyone is told it is on, or off.
        case .alert: true
        // The session file itself is written and fsynced before an edit returns; the state
        // is saved too, since the bag now holds other clips.
        case .addClip, .updateClip, .removeClip, .updateSchedule: true
        // A skip is saved when its clip ends (the `finished` event), which follows at once.
        // A reload changes the session, whose truth is the file that was just read.
        case .skip, .reload: false
        }
    }
}

/// A command's result, and the change to wait for before it is reported done.
public struct Acknowledged<Value: Sendable>: Sendable {
    public var value: Value
    /// nil when nothing must be written first.
    public var durableMark: UInt64?

    public init(_ value: Value, durableMark: UInt64?) {
        self.value = value
        self.durableMark = durableMark
    }
}
