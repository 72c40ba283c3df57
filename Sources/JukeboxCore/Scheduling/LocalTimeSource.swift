/// Where "now" in local time comes from; injected so schedulers are testable.
public protocol LocalTimeSource: Sendable {
    func now() -> LocalTime
}
