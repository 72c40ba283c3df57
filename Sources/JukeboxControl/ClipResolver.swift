import JukeboxCore
import JukeboxProtocol

/// Turns what a client typed into a clip: a session clip id, or the path of a file inside the
/// session's clips folder. A path that leads outside that folder, after following symlinks
/// and `..`, is refused, so the socket cannot be used to read arbitrary files.
struct ClipResolver {
    let catalog: ClipCatalog

    func resolve(_ name: String) throws(RPCError) -> PlayableClip {
        let session = catalog.session
        if let clip = session.clip(id: name) {
            if let problem = catalog.problems[clip.id] { throw .unplayable(name, problem) }
            return PlayableClip(clip)
        }
        guard name.contains("/") || name.contains(".") else { throw .unknownClip(name, suggestions: suggestions(for: name)) }
        let candidate = FilePath.normalize(FilePath.join(session.clipsDirectory, name))
        guard let real = FilePath.resolved(candidate) else {
            if !isInside(candidate, FilePath.resolved(session.clipsDirectory) ?? session.clipsDirectory) { throw .outsideClipsDirectory(name) }
            throw .unknownClip(name, suggestions: suggestions(for: name))
        }
        let folder = FilePath.resolved(session.clipsDirectory) ?? session.clipsDirectory
        guard isInside(real, folder) else { throw .outsideClipsDirectory(name) }
        guard FilePath.isRegularFile(real) else { throw .unknownClip(name, suggestions: []) }
        if let clip = session.clips.first(where: { FilePath.resolved($0.source.path) == real }) {
            return try resolve(clip.id)
        }
        let relative = String(real.dropFirst(folder.count + 1))
        return PlayableClip(id: FilePath.removingExtension(FilePath.lastComponent(relative)), source: ClipSource(file: relative, path: real))
    }

    private func isInside(_ path: String, _ folder: String) -> Bool {
        path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
    }

    /// Up to three ids close to `name`: by edit distance, or sharing its start.
    func suggestions(for name: String) -> [String] {
        let ids = catalog.session.clips.map(\.id)
        let scored = ids.map { ($0, editDistance($0, name)) }
            .filter { $0.1 <= max(2, name.count / 3) || $0.0.lowercased().hasPrefix(name.lowercased()) }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
        return Array(scored.prefix(3).map(\.0))
    }
}
