/// How many bytes of replies one connection may have waiting to be sent. The reader takes
/// from it before it queues a reply and the writer gives back once the reply has reached the
/// socket, so a client that pipelines requests and never reads stops having them read,
/// instead of making the daemon buffer replies without end (NIO's own back-pressure then
/// stops reading its socket). One reply larger than the whole budget still goes through,
/// alone.
actor ReplyBudget {
    let limit: Int
    private var unsent = 0
    private var waiter: CheckedContinuation<Void, Never>?

    init(limit: Int) { self.limit = limit }

    /// Returns once `bytes` more fit; `whenFull` runs first if that means waiting for the
    /// client to read.
    func take(_ bytes: Int, whenFull: @Sendable () -> Void) async {
        if isFull(adding: bytes) { whenFull() }
        while isFull(adding: bytes) {
            await withCheckedContinuation { waiter = $0 }
        }
        unsent += bytes
    }

    private func isFull(adding bytes: Int) -> Bool { unsent > 0 && unsent + bytes > limit }

    func giveBack(_ bytes: Int) {
        unsent -= bytes
        waiter?.resume()
        waiter = nil
    }
}
