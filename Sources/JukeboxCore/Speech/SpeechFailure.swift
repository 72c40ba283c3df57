/// Why an announcement could not be made: the engine is missing, failed, took too long, or
/// wrote nothing playable. The message names the engine and what to do.
public struct SpeechFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }

    static let cancelled = SpeechFailure("skipped while its speech was being made")
}
