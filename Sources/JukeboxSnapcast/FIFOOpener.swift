import Dispatch
import Glibc
import Synchronization

/// Opens the write end of snapserver's FIFO. While snapserver waits for a writer it opens the
/// FIFO, reads end-of-file and closes it again every 100 ms, so a non-blocking open (which
/// needs a reader there at that instant) nearly always fails with ENXIO. A blocking open
/// waits for the next of those moments instead; it runs on a thread of its own, since it may
/// wait as long as snapserver is away, and callers wait for it only a little at a time.
final class FIFOOpener: @unchecked Sendable {
    // @unchecked: `state` is a Mutex; `done` is a semaphore.
    let path: String
    private let thread = DispatchQueue(label: "jukebox.snapcast.open")
    private let state = Mutex<State>(.idle)
    private let done = DispatchSemaphore(value: 0)

    enum State {
        case idle
        case opening
        case opened(Int32)
        case failed(Int32)
        /// The sink is gone: a descriptor that arrives now is closed.
        case abandoned
    }

    init(path: String) { self.path = path }

    /// A blocking write end of the FIFO, or the errno that says why not (ENXIO: snapserver
    /// did not open it for reading within `patience`; the open goes on in the background).
    func open(patience: Duration) -> Result<Int32, Errno> {
        let quick = Glibc.open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        if quick >= 0 { return .success(quick) }
        guard errno == ENXIO else { return .failure(Errno(errno)) }
        let start = state.withLock { current -> Bool in
            if case .idle = current { current = .opening; return true }
            return false
        }
        if start {
            thread.async { [self] in
                let descriptor = Glibc.open(self.path, O_WRONLY | O_CLOEXEC)
                let failure = errno
                self.state.withLock { current in
                    if case .abandoned = current {
                        if descriptor >= 0 { Glibc.close(descriptor) }
                    } else {
                        current = descriptor >= 0 ? .opened(descriptor) : .failed(failure)
                    }
                }
                self.done.signal()
            }
        }
        let deadline = DispatchTime.now() + .milliseconds(Int(patience.milliseconds))
        while true {
            let taken = state.withLock { current -> Result<Int32, Errno>? in
                switch current {
                case .opened(let descriptor): current = .idle; return .success(descriptor)
                case .failed(let code): current = .idle; return .failure(Errno(code))
                default: return nil
                }
            }
            if let taken { return taken }
            if done.wait(timeout: deadline) == .timedOut { return .failure(Errno(ENXIO)) }
        }
    }

    /// Ends a blocking open still waiting (by being its reader for a moment) and closes what
    /// it opens.
    func abandon() {
        let waiting = state.withLock { current -> Bool in
            defer { current = .abandoned }
            switch current {
            case .opening: return true
            case .opened(let descriptor): Glibc.close(descriptor); return false
            default: return false
            }
        }
        if waiting {
            let reader = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            if reader >= 0 {
                done.wait()
                Glibc.close(reader)
            }
        }
    }

    struct Errno: Error, Equatable {
        var code: Int32
        init(_ code: Int32) { self.code = code }
    }
}
