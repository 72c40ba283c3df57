import Logging

/// A session with what probing its files found: each clip's length, or why it cannot be
/// played. Clips with a problem stay in the catalog (so `clips` can show why) but are never
/// scheduled or queued.
public struct ClipCatalog: Sendable {
    public var session: Session
    public var durations: [String: Duration]
    /// Why a clip cannot be played, by clip id.
    public var problems: [String: String]
    /// Why the session's cue cannot be played; the clips then play without it. Kept apart
    /// from `problems`, whose keys are clip ids, so a clip may be called "cue".
    public var cueProblem: String?

    public init(session: Session, durations: [String: Duration] = [:], problems: [String: String] = [:], cueProblem: String? = nil) {
        self.session = session
        self.durations = durations
        self.problems = problems
        self.cueProblem = cueProblem
    }

    public var playableClips: [Clip] { session.clips.filter { problems[$0.id] == nil } }

    /// Opens every clip file and the cue once. A cue that cannot be played is dropped from
    /// the session, with its problem kept in `cueProblem`. With `known`, a file it already
    /// probed and found playable is not opened again (an edit through the API changes the session, not the
    /// files of the clips it leaves alone; a reload reads every file afresh).
    public static func probing(_ session: Session, with decoder: any ClipDecoder, logger: Logger? = nil, known: ClipCatalog? = nil) async -> ClipCatalog {
        var catalog = ClipCatalog(session: session)
        let earlier = Dictionary((known?.session.clips ?? []).map { ($0.source.path, $0.id) }, uniquingKeysWith: { first, _ in first })
        for clip in session.clips {
            // A file that could not be played is tried again: it may have been put right since.
            if let id = earlier[clip.source.path], let duration = known?.durations[id] {
                catalog.durations[clip.id] = duration
                continue
            }
            do {
                catalog.durations[clip.id] = try await decoder.probe(clip.source).duration
            } catch {
                catalog.problems[clip.id] = "\(error)"
                logger?.warning("clip \(clip.id) left out: \(error)", metadata: ["clip": "\(clip.id)"])
            }
        }
        if let cue = session.cue {
            do {
                _ = try await decoder.probe(cue)
            } catch {
                catalog.session.cue = nil
                catalog.cueProblem = "\(error)"
                logger?.warning("cue left out: \(error)")
            }
        }
        return catalog
    }
}
