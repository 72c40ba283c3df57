/// Turns what a client typed into a clip: a session clip id, or the path of a file inside the
/// session's clips folder. A path that leads outside that folder, after following symlinks
/// and `..`, is refused, so the socket cannot be used to read arbitrary files.
public struct ClipResolver: Sendable {
    public let catalog: ClipCatalog

    public init(catalog: ClipCatalog) { self.catalog = catalog }

    public func resolve(_ name: String) throws(JukeboxError) -> PlayableClip {
        let session = catalog.session
        if let clip = session.clip(id: name) {
            if let problem = catalog.problems[clip.id] { throw .unplayable(name, reason: problem) }
            return PlayableClip(clip)
        }
        guard name.contains("/") || name.contains(".") else { throw .unknownClip(name, suggestions: suggestions(for: name)) }
        let candidate = FilePath.normalize(FilePath.join(session.clipsDirectory, name))
        guard let real = FilePath.resolved(candidate) else {
            if !FilePath.isInside(candidate, FilePath.resolved(session.clipsDirectory) ?? session.clipsDirectory) { throw .outsideClipsDirectory(name) }
            throw .unknownClip(name, suggestions: suggestions(for: name))
        }
        let folder = FilePath.resolved(session.clipsDirectory) ?? session.clipsDirectory
        guard FilePath.isInside(real, folder) else { throw .outsideClipsDirectory(name) }
        guard FilePath.isRegularFile(real) else { throw .unknownClip(name, suggestions: []) }
        if let clip = session.clips.first(where: { FilePath.resolved($0.source.path) == real }) {
            return try resolve(clip.id)
        }
        let relative = String(real.dropFirst(folder.count + 1))
        return PlayableClip(id: FilePath.removingExtension(FilePath.lastComponent(relative)), source: ClipSource(file: relative, path: real, within: session.clipsDirectory))
    }

    /// Names longer than this get no suggestions: nobody mistypes a 65 000-character id.
    static let maxSuggestedNameLength = 64

    /// Up to three ids close to `name`: by edit distance, or sharing its start. The cost is
    /// bounded: only short names are looked at, and an id whose length alone puts it out of
    /// reach is never compared, so a request cannot hold the daemon for seconds.
    func suggestions(for name: String) -> [String] {
        guard name.count <= Self.maxSuggestedNameLength else { return [] }
        let length = name.count, lowered = name.lowercased(), reach = max(2, length / 3)
        var scored: [(String, Int)] = []
        for id in catalog.session.clips.lazy.map(\.id) {
            if id.lowercased().hasPrefix(lowered) {
                scored.append((id, abs(id.count - length)))
            } else if abs(id.count - length) <= reach {
                let distance = editDistance(id, name)
                if distance <= reach { scored.append((id, distance)) }
            }
        }
        return Array(scored.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(3).map(\.0))
    }
}
