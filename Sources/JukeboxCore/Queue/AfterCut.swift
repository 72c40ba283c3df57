/// What becomes of a clip that an urgent entry cuts (the session's `afterCut`).
public enum AfterCut: String, Sendable, Equatable, CaseIterable {
    /// It goes on from where it was cut, once the urgent entries have played.
    case resume
    /// It plays again from its start (with its cue), once the urgent entries have played.
    case restart
    /// It ends there, as skipped.
    case drop
}
