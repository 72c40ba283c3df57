/// Capped exponential backoff for retrying an audio device that is missing or busy:
/// 0.5 s, 1 s, 2 s … up to 30 s, so a USB DAC that appears late is picked up quickly
/// without a tight retry loop filling the log.
public struct Backoff: Sendable, Equatable {
    public let initial: Duration
    public let maximum: Duration
    private var nextDelay: Duration

    public init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(30)) {
        self.initial = initial
        self.maximum = maximum
        self.nextDelay = initial
    }

    public mutating func next() -> Duration {
        let delay = nextDelay
        nextDelay = min(nextDelay * 2, maximum)
        return delay
    }

    public mutating func reset() { nextDelay = initial }
}
