/// The session's `bed` section: a FIFO another player writes music into (MPD's `fifo`
/// output, librespot's or shairport-sync's pipe backend), played under the clips through
/// the session's output and lowered while each clip sounds. Off when absent.
public struct BedSettings: Sendable, Equatable {
    /// The FIFO the music comes in through (made if it is not there).
    public var pipe: String
    /// What the writer writes: raw little-endian PCM, `RATE:BITS:CHANNELS`.
    public var format: StreamFormat
    /// What is left of the music while a clip sounds, as a fraction (−18 dB: 0.126).
    public var level: Double
    /// How long the lowering takes; the clip is heard once it is done.
    public var attack: Duration
    /// How long the raising takes, after the clip.
    public var release: Duration
    /// The group the FIFO is made for (mode 0660), so that a player running as another user
    /// in that group (MPD's user is in `audio`) may write it; nil: made 0666 less the umask.
    public var group: String?

    /// MPD's fifo output, librespot and shairport-sync all write CD audio unless told otherwise.
    public static let defaultFormat = StreamFormat(sampleRate: 44_100, bits: 16, channels: 2)

    public init(
        pipe: String, format: StreamFormat = defaultFormat, level: Double = DuckSettings.defaultLevel,
        attack: Duration = DuckSettings.defaultAttack, release: Duration = DuckSettings.defaultRelease
    ) {
        self.pipe = pipe
        self.format = format
        self.level = level
        self.attack = attack
        self.release = release
    }
}

// The session's section: its reader, its checks and its messages.
extension SessionReader {
    static let bedKeys = ["pipe", "format", "level", "attack", "release", "group"]

    /// `bed: {"pipe": "/run/jukeboxd/bed", "format": "44100:16:2", "level": "-18dB",
    /// "attack": "300ms", "release": "1s"}`.
    mutating func bed(_ value: JSONValue, sessionDirectory: String) -> BedSettings? {
        guard let fields = object(value, at: "bed", allowed: Self.bedKeys) else { return nil }
        guard let pipe = fields["pipe"].flatMap({ nonEmptyString($0, at: "bed.pipe") }) else {
            if fields["pipe"] == nil { problem("bed.pipe", "missing (the FIFO the music is written into, such as \"/run/jukeboxd/bed\", the path of MPD's fifo output)") }
            return nil
        }
        var settings = BedSettings(pipe: FilePath.normalize(FilePath.join(sessionDirectory, pipe)))
        if let value = fields["format"], let text = nonEmptyString(value, at: "bed.format") {
            switch StreamFormat.parse(text) {
            case .success(let format): settings.format = format
            case .failure(let problem): self.problem("bed.format", "\(value.shortDescription) \(problem.text); it is the format the player writes, as MPD's fifo output's \"format\"")
            }
        }
        if let value = fields["group"], let group = nonEmptyString(value, at: "bed.group") {
            if UserName.groupID(group) == nil {
                problem("bed.group", "no group named \"\(group)\" (see `getent group`; MPD's user is in \"audio\")")
            } else {
                settings.group = group
            }
        }
        lowering(fields, at: "bed", what: "lower the music to", level: &settings.level, attack: &settings.attack, release: &settings.release)
        return settings
    }
}
