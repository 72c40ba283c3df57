/// The queue refused an entry because `capacity` entries are already waiting.
public struct QueueFullError: Error, Sendable, Equatable, CustomStringConvertible {
    public var capacity: Int
    public init(capacity: Int) { self.capacity = capacity }
    public var description: String { "the queue is full (\(capacity == 1 ? "1 clip" : "\(capacity) clips") waiting); try again later or clear it" }
}
