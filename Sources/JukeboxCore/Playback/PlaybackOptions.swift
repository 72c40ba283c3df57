/// How the player treats the device around the clips themselves: what keeps receivers and
/// DACs from clipping the start of a clip, and cuts from clicking.
public struct PlaybackOptions: Sendable, Equatable {
    /// What happens to the device when nothing is playing.
    public enum KeepDeviceOpen: String, Sendable, CaseIterable {
        /// Drain and close after `idleTimeout`, so other programs can use the device.
        case idle
        /// Stay open and keep writing silence, for DACs and amplifiers that pop when their
        /// input stops or powers down.
        case always
    }

    /// Silence written after the device opens, before the first clip: receivers (HDMI,
    /// Bluetooth, some USB DACs) wake on signal and would swallow the clip's first moments.
    public var leadIn: Duration
    /// Ramp length when a clip is cut short (skip, pause, stop) and when a pause resumes, so
    /// the cut is not a step in the waveform, which is heard as a click.
    public var fade: Duration
    public var keepDeviceOpen: KeepDeviceOpen
    /// How long an idle device stays open (`keepDeviceOpen == .idle`) in case another clip follows.
    public var idleTimeout: Duration

    public static let defaultFade: Duration = .milliseconds(10)

    public init(
        leadIn: Duration = .zero, fade: Duration = PlaybackOptions.defaultFade, keepDeviceOpen: KeepDeviceOpen = .idle,
        idleTimeout: Duration = .seconds(5)
    ) {
        self.leadIn = leadIn
        self.fade = fade
        self.keepDeviceOpen = keepDeviceOpen
        self.idleTimeout = idleTimeout
    }
}
