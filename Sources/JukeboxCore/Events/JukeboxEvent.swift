/// What happened in the daemon, as clients that follow events see it.
public enum JukeboxEvent: Sendable, Equatable {
    case queued(QueueEntry, position: Int)
    /// A client's request held until quiet hours end (`afterQuiet`); `queued` follows then.
    case held(QueueEntry)
    case playing(QueueEntry)
    /// An entry ended, or a fixed time did not play (missed, or skipped for quiet): the
    /// play as the history keeps it.
    case finished(PlayRecord)
    /// An urgent entry cut this one, which waits again at `position`, to go on from where
    /// it was cut or from its start (`QueueEntry.resumeAt`, the session's `afterCut`).
    case cut(QueueEntry, position: Int)
    case removed([UInt64])
    case paused
    case resumed
    /// The scheduler's next pick, in seconds since the Unix epoch (nil: none planned).
    case scheduled(nextPickEpochSeconds: Double?)
    case device(DeviceState)
    case sessionReloaded(name: String, clips: Int)
    /// The volume changed, 0–100 (from any front end, or a reload).
    case volume(Int)
    /// Other players were lowered or paused while clips sound (the session's `duck`): all
    /// that are down now, by name.
    case ducked([String])
    /// These players were put back.
    case restored([String])
    /// Quiet began or ended, by hand or by the session's quiet hours, or held requests were
    /// released.
    case quiet(QuietHours.Status)
    /// The music bed's music was turned on or off (`bed on|off`).
    case music(on: Bool)
    /// The day plans changed: a plan set or cleared by hand (`byHand`, told once saved), a
    /// calendar read anew, a reload, or a new day. `plan` tells what they are now.
    case plans(byHand: Bool)
    /// An alert started (the one on now), or the one on ended (nil). An alert that replaces
    /// another is told once, as the one on now.
    case alert(ClipPlayQueue.AlertRun?)
}

extension JukeboxEvent {
    /// Whether the event describes a change of the saved state (the queue, pause, volume,
    /// the history), which subscribers hear of only once it is on disk.
    public var describesSavedState: Bool {
        switch self {
        case .queued, .held, .playing, .finished, .cut, .removed, .ducked, .restored, .paused, .resumed, .volume, .quiet, .music, .alert: true
        case .plans(let byHand): byHand
        case .scheduled, .device, .sessionReloaded: false
        }
    }
}
