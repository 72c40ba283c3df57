/// What the play queue carries: a file plus how loud to play it. Independent of the session
/// so a reload cannot change an entry that is already queued.
public struct PlayableClip: Sendable, Hashable, CustomStringConvertible {
    public var id: String
    public var source: ClipSource
    public var title: String
    public var gainDecibels: Double

    public init(id: String, source: ClipSource, title: String? = nil, gainDecibels: Double = 0) {
        self.id = id
        self.source = source
        self.title = title ?? id
        self.gainDecibels = gainDecibels
    }

    public init(_ clip: Clip) {
        self.init(id: clip.id, source: clip.source, title: clip.title, gainDecibels: clip.gainDecibels)
    }

    public var description: String { "\(id) (\(source.file))" }
}
