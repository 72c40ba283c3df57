/// What the play queue carries: a file plus how loud to play it. Independent of the session
/// so a reload cannot change an entry that is already queued.
public struct PlayableClip: Sendable, Hashable, CustomStringConvertible {
    public var id: String
    public var source: ClipSource
    public var title: String
    public var gainDecibels: Double
    /// An announcement (`say`): the text to speak. Its audio is made by the speech engine
    /// when it is about to play (or sooner, in the background), and `source` is set then.
    public var speech: String?
    /// Whether the session's other players are lowered while it sounds (the clip's `duck`,
    /// as the session said when it was queued; an announcement always does).
    public var ducks: Bool

    public init(id: String, source: ClipSource, title: String? = nil, gainDecibels: Double = 0, speech: String? = nil, ducks: Bool = true) {
        self.ducks = ducks
        self.id = id
        self.source = source
        self.title = title ?? id
        self.gainDecibels = gainDecibels
        self.speech = speech
    }

    /// The id every announcement has in the queue and the history.
    public static let speechID = "say"
    /// How an announcement is shown: `say: ` and the text's first words.
    public static let speechTitleLength = 60

    /// An announcement of `text` (already checked: `SpeechText`).
    public static func spoken(_ text: String) -> PlayableClip {
        let short = text.count > speechTitleLength ? text.prefix(speechTitleLength - 1) + "…" : Substring(text)
        return PlayableClip(id: speechID, source: ClipSource(file: "say: \(short)", path: ""), title: "say: \(short)", speech: text)
    }

    public init(_ clip: Clip) {
        self.init(id: clip.id, source: clip.source, title: clip.title, gainDecibels: clip.gainDecibels, ducks: clip.ducks)
    }

    public var description: String { "\(id) (\(source.file))" }
}
