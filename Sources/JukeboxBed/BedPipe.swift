import Dispatch
import Glibc
import JukeboxAudio
import Synchronization

/// Reads the music bed's FIFO on a thread of its own, whatever writes into it (MPD's `fifo`
/// output, librespot's or shairport-sync's pipe backend), and keeps what came in, in the
/// mixer's format, until the mixer takes it.
///
/// It never makes the mixer wait: the mixer takes what there is, and a pipe that has run dry
/// is silence. A writer that starts again is heard once `prefill` has come in, so one that
/// writes in bursts plays without a stutter. It holds at most `highMark` of music: a writer
/// that is not paced (librespot's pipe) is held back by the pipe filling, and a paced one
/// (MPD) is never more than that plus the pipe behind, so the music's delay stays bounded.
final class BedPipe: @unchecked Sendable {
    // @unchecked: `shared` is a Mutex; everything else is set at init or used on `thread` only.
    let path: String
    let format: StreamFormat
    let mix: AudioFormat
    private let thread = DispatchQueue(label: "jukebox.bed.pipe")
    private let stopped = DispatchSemaphore(value: 0)
    /// `stop()` writes a byte to the one end; the reader polls the other with the pipe.
    private let wake: Int32
    private let wakeWriter: Int32
    private let shared: Mutex<Shared>
    private let makeRateConverter: RateConverterFactory?
    private let group: gid_t?
    /// Called, from the reader's thread, when enough music has come in to be heard
    /// (`prefill`) while none was flowing: a mixer at rest starts again.
    private let musicReady: @Sendable () -> Void

    struct Shared: ~Copyable {
        var ring: FrameRing
        /// Music flows to the mixer; false while dry, until `prefill` has come in.
        var flowing = false
        var lastMusic: ContinuousClock.Instant?
        var problem: String?
        var stopping = false
        /// Partial frames dropped (`partialFrameWait`).
        var partialFramesDropped = 0
        /// Times the music ran out part-way through a block while it was flowing.
        var dryOuts = 0
        /// How much must have come in before music flows again: `prefill`, and more for a
        /// writer that turned out late (see `add`).
        var prefill: Int
        var driedAt: ContinuousClock.Instant?
    }

    /// Music held before a writer that started (again) is heard: a mixer block (50 ms) and
    /// the chunk a paced writer hands over at once (MPD's fifo output: 23 ms), so it plays on
    /// without running dry between two of them; and, with the mixer's block, picked up
    /// within 125 ms.
    static let prefill: Duration = .milliseconds(75)
    /// A writer that ran dry and came back within `quietAfter` was late, not stopped: its
    /// jitter is more than the prefill holds, which grows by `prefillStep` each time, up to
    /// `maxPrefill` (an output that takes blocks in bursts adds its own: snapserver's pipe
    /// is refilled 40 ms at a time).
    static let prefillStep: Duration = .milliseconds(25)
    static let maxPrefill: Duration = .milliseconds(150)
    /// The most music held; the reader stops reading there (see the type's comment).
    static let highMark: Duration = .milliseconds(250)
    /// The kernel's pipe is made about this big (in whole pages), so what waits in it adds
    /// little delay either.
    static let pipeHolds: Duration = .milliseconds(100)
    /// How often a missing or unreadable pipe is looked for again.
    static let retryEvery: Duration = .milliseconds(100)
    /// A partial frame with nothing after it for this long is dropped: the writer that left
    /// it has stopped, and the next writer's bytes start a frame of their own. Ten times a
    /// writer's usual pause between blocks, and ten blocks of the mix.
    static let partialFrameWait: Duration = .milliseconds(250)
    /// Music counts as playing until nothing has come in for this long.
    static let quietAfter: Duration = .seconds(1)

    /// `format`: what the writer writes; `mix`: the rate and channels the mixer runs at.
    /// `group`: the group the FIFO is given to, mode 0660, so a writer in it may write.
    init(
        path: String, format: StreamFormat, group: gid_t? = nil, mix: AudioFormat, makeRateConverter: RateConverterFactory?,
        musicReady: @escaping @Sendable () -> Void = {}
    ) {
        self.musicReady = musicReady
        self.path = path
        self.group = group
        self.format = format
        self.mix = mix
        self.makeRateConverter = makeRateConverter
        var ends: [Int32] = [-1, -1]
        _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &ends)
        (wake, wakeWriter) = (ends[0], ends[1])
        shared = Mutex(Shared(
            ring: FrameRing(capacityFrames: mix.frames(in: Self.highMark) + mix.frames(in: .milliseconds(50)), channels: mix.channels),
            prefill: mix.frames(in: Self.prefill)))
    }

    deinit {
        if wake >= 0 { Glibc.close(wake) }
        if wakeWriter >= 0 { Glibc.close(wakeWriter) }
    }

    func start() {
        thread.async { self.run() }
    }

    /// Ends the reader and waits for it to have closed the pipe: a blocking wait, for a
    /// thread of its own (`BlockingWorkQueue`).
    func stop() {
        let first = shared.withLock { shared -> Bool in
            defer { shared.stopping = true }
            return !shared.stopping
        }
        guard first else { return }
        var one: UInt8 = 1
        _ = Glibc.write(wakeWriter, &one, 1)
        stopped.wait()
    }

    /// Adds `frames` of music, scaled by a gain that moves in a straight line from `from` to
    /// `to`, into `output`; false when there is no music to add (dry, or not yet `prefill`).
    func add(_ frames: Int, into output: inout [Float], from: Float, to: Float) -> Bool {
        shared.withLock { shared in
            if !shared.flowing {
                guard shared.ring.frames >= shared.prefill else { return false }
                shared.flowing = true
                if let dried = shared.driedAt, ContinuousClock.now - dried < Self.quietAfter {
                    shared.prefill = min(shared.prefill + mix.frames(in: Self.prefillStep), mix.frames(in: Self.maxPrefill))
                }
                shared.driedAt = nil
            }
            let available = min(frames, shared.ring.frames)
            if from == to {
                shared.ring.take(available, addingInto: &output, gain: from)
            } else {
                // In short runs, each at its own gain: a ramp without a multiply per sample more.
                let run = 32
                var done = 0
                while done < available {
                    let count = min(run, available - done)
                    let gain = from + (to - from) * Float(done) / Float(max(frames, 1))
                    shared.ring.take(count, addingInto: &output, at: done * mix.channels, gain: gain)
                    done += count
                }
            }
            // Ran dry part-way: silence, and music again once `prefill` is in.
            if available < frames {
                shared.flowing = false
                shared.dryOuts += 1
                shared.driedAt = .now
            }
            return available > 0
        }
    }

    var buffered: Int { shared.withLock { $0.ring.frames } }
    /// Whether music is flowing, or enough has come in to be heard.
    var hasMusic: Bool { shared.withLock { $0.flowing || $0.ring.frames >= $0.prefill } }
    var dryOuts: Int { shared.withLock { $0.dryOuts } }

    /// Whether music came in within `quietAfter`, and why the pipe cannot be read.
    func state(now: ContinuousClock.Instant = .now) -> (playing: Bool, problem: String?) {
        shared.withLock { shared in
            (shared.lastMusic.map { now - $0 < Self.quietAfter } ?? false, shared.problem)
        }
    }

    // MARK: - On the reader's thread

    private func run() {
        defer { stopped.signal() }
        var descriptor: Int32 = -1
        var canWrite = false
        var leftover: [UInt8] = []
        // When the last bytes came: a partial frame left that long is a writer's last, never
        // the start of the next writer's audio (this end also holds the FIFO open for
        // writing, so it never sees one writer go and another come).
        var lastRead = ContinuousClock.now
        var converter: (any RateConverter)?
        if format.sampleRate != mix.sampleRate, let makeRateConverter {
            do {
                converter = try makeRateConverter(format.sampleRate, mix.sampleRate, mix.channels)
            } catch {
                report("its rate cannot be converted to \(mix.sampleRate) Hz: \(error)")
                return
            }
        } else if format.sampleRate != mix.sampleRate {
            report("it is at \(format.sampleRate) Hz and the output at \(mix.sampleRate) Hz; give the bed the output's rate")
            return
        }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while !isStopping {
            if descriptor < 0 {
                switch openPipe() {
                case .success(let opened):
                    (descriptor, canWrite) = opened
                    report(nil)
                case .failure(let problem):
                    report(problem.text)
                    waitForWake(milliseconds: Int32(Self.retryEvery.milliseconds))
                    continue
                }
            }
            let room = shared.withLock { $0.ring.room - mix.frames(in: .milliseconds(50)) }
            guard room > 0 else {
                // Holding `highMark`: the mixer takes it down in real time.
                waitForWake(milliseconds: 20)
                continue
            }
            var waits = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&waits, 2, leftover.isEmpty ? 1000 : Int32(Self.partialFrameWait.milliseconds))
            if ready < 0, errno == EINTR { continue }
            if !leftover.isEmpty, ContinuousClock.now - lastRead >= Self.partialFrameWait {
                leftover.removeAll()
                shared.withLock { $0.partialFramesDropped += 1 }
            }
            if waits[1].revents & Int16(POLLIN) != 0 { continue }
            // A writer's share of what this reads, in bytes: no more than there is room for.
            let inputFrames = max(1, room * format.sampleRate / max(mix.sampleRate, 1))
            let wanted = min(buffer.count, inputFrames * format.bytesPerFrame)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, wanted) }
            if count > 0 {
                lastRead = .now
                leftover.append(contentsOf: buffer[0..<count])
                let whole = leftover.count / format.bytesPerFrame * format.bytesPerFrame
                guard whole > 0 else { continue }
                var samples = leftover.withUnsafeBytes { PCMBytes.floats(UnsafeRawBufferPointer(rebasing: $0[0..<whole]), bits: format.bits) }
                leftover.removeFirst(whole)
                SampleMath.makeFinite(&samples)
                samples = SampleMath.mapChannels(samples, from: format.channels, to: mix.channels)
                if let converter { samples = converter.process(samples) }
                let ready = shared.withLock { shared in
                    shared.ring.append(samples[...])
                    shared.lastMusic = .now
                    return !shared.flowing && shared.ring.frames >= shared.prefill
                }
                if ready { musicReady() }
            } else if count == 0 || (waits[0].revents & Int16(POLLHUP) != 0 && errno == EAGAIN) {
                // No writer (a pipe opened read-only sees end-of-file then): a partial frame
                // left from the last writer is dropped, and the next writer is looked for
                // every `retryEvery`.
                leftover.removeAll()
                if !canWrite { waitForWake(milliseconds: Int32(Self.retryEvery.milliseconds)) }
            } else if errno != EAGAIN, errno != EINTR {
                report("reading it failed: \(FileReadError(errno: errno))")
                Glibc.close(descriptor)
                descriptor = -1
            }
        }
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    private var isStopping: Bool { shared.withLock { $0.stopping } }

    /// How many partial frames were dropped, for tests.
    var partialFramesDropped: Int { shared.withLock { $0.partialFramesDropped } }

    private func waitForWake(milliseconds: Int32) {
        var waiting = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
        _ = poll(&waiting, 1, milliseconds)
    }

    private func report(_ problem: String?) {
        shared.withLock { $0.problem = problem }
    }

    private struct Problem: Error { var text: String }

    /// Opens the FIFO, making it first if it is not there. Read and write, where the
    /// permissions allow: with a write end of its own held open, the reader never sees
    /// end-of-file between two writers. Otherwise read-only (a FIFO another user made).
    private func openPipe() -> Result<(Int32, Bool), Problem> {
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else { return .failure(Problem(text: "\(path): \(FileReadError(errno: errno))")) }
            // As the writers make it (MPD's fifo output makes it 0666 too), within the umask.
            if mkfifo(path, 0o666) != 0, errno != EEXIST {
                return .failure(Problem(text: "\(path) does not exist and cannot be made: \(FileReadError(errno: errno))"))
            }
        } else if info.st_mode & S_IFMT != S_IFIFO {
            return .failure(Problem(text: "\(path) is not a named pipe (FIFO); give bed.pipe a path where one can be made, or make it with mkfifo"))
        }
        if let problem = share() { return .failure(problem) }
        var canWrite = true
        var descriptor = Glibc.open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        if descriptor < 0, errno == EACCES {
            canWrite = false
            descriptor = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            let code = errno
            let hint = code == EACCES ? "; give jukeboxd's user read access to it" : ""
            return .failure(Problem(text: "\(path) cannot be opened: \(FileReadError(errno: code))\(hint)"))
        }
        // Checked again on what was opened: the path may have been swapped meanwhile.
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else {
            Glibc.close(descriptor)
            return .failure(Problem(text: "\(path) is not a named pipe (FIFO)"))
        }
        var size = 4096
        let bytes = format.sampleRate * Int(Self.pipeHolds.milliseconds) / 1000 * format.bytesPerFrame
        while size < bytes { size *= 2 }
        _ = fcntl(descriptor, Self.setPipeSize, Int32(size))
        return .success((descriptor, canWrite))
    }

    /// Gives the FIFO to `group`, mode 0660: jukeboxd's own FIFO is changed; another user's
    /// must already let the group write, or the reason is the bed's problem, with what to do.
    private func share() -> Problem? {
        guard let group else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        if info.st_uid == geteuid() {
            guard chown(path, uid_t.max, group) == 0, chmod(path, 0o660) == 0 else {
                return Problem(text: "\(path) cannot be given to its group (bed.group): \(FileReadError(errno: errno)); jukeboxd's user must be in the group")
            }
            return nil
        }
        if info.st_gid != group || info.st_mode & 0o060 != 0o060 {
            return Problem(text: "\(path) belongs to \(UserName.of(info.st_uid)), and its group may not read and write it as bed.group says; remove it so jukeboxd makes it, or run chgrp and chmod g+rw on it")
        }
        return nil
    }

    /// `F_SETPIPE_SZ` (`F_LINUX_SPECIFIC_BASE + 7`), which Swift's Glibc module leaves out.
    static let setPipeSize: Int32 = 1031
}
