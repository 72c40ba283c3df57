import Synchronization

/// Calls `action` once, when `done()` has been called `count` times.
final class Countdown: Sendable {
    private let remaining: Mutex<Int>
    private let action: @Sendable () -> Void

    init(_ count: Int, action: @escaping @Sendable () -> Void) {
        remaining = Mutex(count)
        self.action = action
    }

    func done() {
        let fire = remaining.withLock { remaining in
            remaining -= 1
            return remaining == 0
        }
        if fire { action() }
    }
}
