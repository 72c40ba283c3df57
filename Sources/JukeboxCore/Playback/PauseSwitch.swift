import Synchronization

/// Whether the clip playing must stop where the listener hears it: because playback is
/// paused, or because an urgent entry is cutting in. The play queue owns it and is the only
/// one that sets it; the player reads it at every block of the clip it plays, so a pause or
/// a cut that comes just before a clip starts is not missed.
public final class PauseSwitch: Sendable {
    private let on = Atomic<Bool>(false)
    private let cut = Atomic<Bool>(false)

    public init() {}

    /// Paused by a client.
    public var isOn: Bool { on.load(ordering: .acquiring) }

    /// An urgent entry waits: the clip playing stops where it is heard, and the queue puts it
    /// back after the urgent entries (`afterCut`).
    public var cutRequested: Bool { cut.load(ordering: .acquiring) }

    /// Whether the clip playing must stop now, for either reason.
    var stops: Bool { isOn || cutRequested }

    func set(_ value: Bool) { on.store(value, ordering: .releasing) }

    func requestCut(_ value: Bool) { cut.store(value, ordering: .releasing) }
}
