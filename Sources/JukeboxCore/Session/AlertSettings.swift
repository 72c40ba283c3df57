/// An alert the session can start (`alerts`): a lockdown or an evacuation tone. Once started,
/// it is a state, latched until someone ends it: its sound repeats over everything else, at a
/// level of its own, and it sounds again first after a power cut. See docs/alerts.md.
public struct AlertSettings: Sendable, Equatable {
    /// What sounds: a clip of the session (`clip`), or text the speech engine speaks (`say`).
    public enum Sound: Sendable, Equatable {
        case clip(String)
        case say(String)
    }

    /// How front ends name it (`jukebox alert lockdown`, Home Assistant's "Alert: lockdown").
    public var name: String
    public var sound: Sound
    /// The silence between one sounding's end and the next one's start (`every`).
    public var every: Duration
    /// The clip played once when the alert ends (`end`); nil: none.
    public var end: String?
    /// Its level, 0–1 of full scale (`level`), whatever the volume, its schedule, quiet hours
    /// and `maxVolume` say.
    public var level: Double

    /// A session has at most this many alerts.
    public static let maxAlerts = 8
    public static let maxNameLength = 40
    /// `every` may be from back to back to an hour.
    public static let everyRange: ClosedRange<Duration> = .zero ... .seconds(3600)
    /// `every` unless set: the sound repeats back to back.
    public static let defaultEvery: Duration = .zero
    public static let keys = ["clip", "say", "every", "end", "level"]

    public init(name: String, sound: Sound, every: Duration = AlertSettings.defaultEvery, end: String? = nil, level: Double = 1) {
        self.name = name
        self.sound = sound
        self.every = every
        self.end = end
        self.level = level
    }
}

extension Session {
    public func alert(named name: String) -> AlertSettings? { alerts.first { $0.name == name } }
}
