import Synchronization

/// Whether playback is paused. The play queue owns it and is the only one that sets it; the
/// player reads it at every block of the clip it plays, so a pause that comes just before a
/// clip starts is not missed.
public final class PauseSwitch: Sendable {
    private let on = Atomic<Bool>(false)

    public init() {}

    public var isOn: Bool { on.load(ordering: .acquiring) }

    func set(_ value: Bool) { on.store(value, ordering: .releasing) }
}
