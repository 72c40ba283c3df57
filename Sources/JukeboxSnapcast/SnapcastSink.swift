import Glibc
import JukeboxAudio
import Synchronization

/// Plays into snapserver's `pipe://` source: PCM in the stream's fixed format, which every
/// snapclient then plays in sync. It opens with that format's rate and channels, in float
/// samples, whatever the clip's; the conversion stage (`ConvertingSink`) maps the channels
/// and converts the rate. Gain, volume, lead-in, fades and the cue are the player's, as on
/// ALSA; this sink turns the floats into the stream's integers.
///
/// Pacing is snapserver's: it reads one chunk per `chunk_ms` of its own clock. The sink keeps
/// at most `aheadLimit` in the pipe (it asks the pipe what it holds), and once that is there it
/// waits until snapserver has read it down to `refillLevel` before writing again: one wake-up
/// per 40 ms of audio, where waiting for room would wake it for every 20 ms chunk. Between clips
/// nothing is written and snapserver plays silence; the pipe stays open, since closing it
/// would make snapserver read end-of-file and reconnect over and over. Every blocking call
/// runs on the sink's own thread.
///
/// A clip counts as played once its last frame is in the pipe: there is nothing to drain,
/// so a quiet pipe can never make a clip fail.
public final class SnapcastSink: AudioSink, @unchecked Sendable {
    // @unchecked: `pipe` and `lastWrite` are only used on `queue`;
    // `wakeFD` is set once at init.
    public let deviceName: String
    public let path: String
    public let format: StreamFormat
    private let queue = BlockingWorkQueue(label: "jukebox.snapcast")
    private var pipe: Int32 = -1
    private var lastWrite: ContinuousClock.Instant?
    /// Nothing has been written since the pipe was opened (see `send`).
    private var freshlyOpened = false
    /// The pipe was lost, or could not be opened: snapserver is (re)starting, and its clients
    /// reconnect only a second later, so the next open writes `reconnectLeadIn` first.
    private var recovering = false
    private let opener: FIFOOpener
    /// `interrupt()` writes a byte here; a write waiting for room polls the other end.
    private let wake: (read: Int32, write: Int32)

    /// How far ahead of snapserver the sink may be, so a skip is heard within about this plus
    /// Snapcast's own buffer. The pipe itself is made the next power of two up from twice this,
    /// so it has room for it in whole pages.
    public static let aheadLimit: Duration = .milliseconds(100)
    /// How low the pipe may run before it is filled again: what is left for the time it takes
    /// this thread to wake and write, and, between clips, for the next clip to begin.
    static let refillLevel: Duration = .milliseconds(60)
    /// After this long without a write, the next clip starts with `fadeIn` (snapclients
    /// click when a stream starts from nothing at full level).
    static let idleGap: Duration = .milliseconds(200)
    static let fadeIn: Duration = .milliseconds(5)
    /// A pipe that takes nothing for this long is reported: snapserver is stopped or hung.
    static let stallLimit: Duration = .seconds(3)
    /// How long an open waits for snapserver, which looks for a writer every 100 ms.
    static let openPatience: Duration = .milliseconds(250)
    /// How long the first write after an open waits for snapserver to read again: it may
    /// have read end-of-file in the instant before the pipe was opened, and it comes back
    /// after 100 ms.
    static let reopenGrace: Duration = .milliseconds(300)
    /// Silence written when snapserver is back after being away, before the clip: a snapclient
    /// tries again 1 s after it lost the server, then syncs its clock, and would otherwise
    /// miss the start of the clip that plays again.
    static let reconnectLeadIn: Duration = .milliseconds(2000)

    /// `deviceName` is how messages and `status` name the output (the session's words for it).
    public init(path: String, format: StreamFormat, deviceName: String? = nil) {
        self.path = path
        self.format = format
        self.deviceName = deviceName ?? "snapcast:\(path) (\(format))"
        self.opener = FIFOOpener(path: path)
        var ends: [Int32] = [-1, -1]
        _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &ends)
        wake = (ends[0], ends[1])
    }

    deinit {
        opener.abandon()
        if pipe >= 0 { Glibc.close(pipe) }
        if wake.read >= 0 { Glibc.close(wake.read) }
        if wake.write >= 0 { Glibc.close(wake.write) }
    }

    /// `F_SETPIPE_SZ` (`F_LINUX_SPECIFIC_BASE + 7`), which Swift's Glibc module leaves out.
    static let setPipeSize: Int32 = 1031

    public var underruns: Int { 0 }
    /// What is in the pipe is snapserver's: it cannot be taken back.
    public var canDiscard: Bool { false }
    /// Each block costs a hop to this thread and back, whatever its size, so blocks are not
    /// small; nor as large as ALSA's 250 ms: between two blocks the pipe holds as little as
    /// `refillLevel`, and in that time the player must bring the next block and this thread
    /// convert it; a larger block is more to convert (and a debug build converts slowly).
    public var blockDuration: Duration { .milliseconds(100) }

    public func interrupt() {
        var one: UInt8 = 1
        _ = Glibc.write(wake.write, &one, 1)
    }

    private func clearInterrupt() {
        var drained = [UInt8](repeating: 0, count: 64)
        while Glibc.read(wake.read, &drained, drained.count) > 0 {}
    }

    /// Opens the pipe; blocks are to come as float samples in the stream's rate and channels.
    public func open(_ requested: AudioFormat) async throws -> AudioFormat {
        try await queue.run {
            do {
                try self.openPipe()
            } catch {
                self.recovering = true
                throw error
            }
            if self.recovering {
                self.recovering = false
                let frames = self.format.sampleRate * Int(Self.reconnectLeadIn.milliseconds) / 1000
                // A skip cuts it short; the clip's own write then sees the skip.
                do { try self.send([UInt8](repeating: 0, count: frames * self.format.bytesPerFrame)) } catch is WriteInterrupted {}
            }
            return self.streamFormat
        }
    }

    /// The stream's rate and channels, in the float samples this sink takes.
    private var streamFormat: AudioFormat {
        AudioFormat(sampleFormat: .float32, sampleRate: format.sampleRate, channels: format.channels)
    }

    public func write(_ buffer: AudioBuffer) async throws {
        try await queue.run { try self.writeBlocking(buffer) }
    }

    /// Nothing to wait for: a clip is played once its last frame is in the pipe.
    public func drain() async throws {}

    public func cancel() async -> Int {
        await queue.run { self.clearInterrupt() }
        return 0
    }

    public func rewind(upTo maxFrames: Int, keeping: Int) async -> Int {
        await queue.run { self.clearInterrupt() }
        return 0
    }

    /// The pipe itself stays open (see the type's comment).
    public func close() async {}

    // MARK: - On the sink's thread

    private func openPipe() throws {
        guard pipe < 0 else { return }
        // Not a FIFO (a file, a folder): refused before anything could be written into it.
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFIFO { throw notAPipe }
        let descriptor: Int32
        switch opener.open(patience: Self.openPatience) {
        case .success(let opened): descriptor = opened
        case .failure(let error): throw openError(error.code)
        }
        // Checked again on what was opened: the path may have been swapped meanwhile.
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else {
            Glibc.close(descriptor)
            throw notAPipe
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        // Room for `aheadLimit` in whole pages, and not much more: what `send` puts in the
        // pipe is bounded by what it holds, and this bounds it again. Shrinking can fail
        // (EBUSY) while the pipe holds more than that; it is then left as it is.
        var size = 4096
        while size < 2 * bytes(in: Self.aheadLimit) { size *= 2 }
        _ = fcntl(descriptor, Self.setPipeSize, Int32(size))
        pipe = descriptor
        freshlyOpened = true
        lastWrite = nil
    }

    private var notAPipe: AudioDeviceError {
        AudioDeviceError(
            code: .notFound, device: deviceName, operation: "open", reason: "\(path) is not a named pipe (FIFO)",
            hint: "set output.pipe to the FIFO of snapserver's pipe:// source, such as /run/snapserver/jukeboxd")
    }

    private func openError(_ code: Int32) -> AudioDeviceError {
        switch code {
        case ENXIO:
            AudioDeviceError(code: .notFound, device: deviceName, operation: "open", reason: "snapserver is not reading \(path)",
                             hint: "start snapserver (systemctl start snapserver); clips wait until it reads the pipe")
        case ENOENT:
            AudioDeviceError(code: .notFound, device: deviceName, operation: "open", reason: "\(path) does not exist",
                             hint: "snapserver makes it when it starts with mode=create in its pipe:// source; check that source's path")
        case EACCES, EPERM:
            AudioDeviceError(code: .permissionDenied, device: deviceName, operation: "open", reason: "no permission to write \(path)",
                             hint: "give jukeboxd's user write access to the pipe and its folder (snapserver makes the pipe 0666 with mode=create)")
        case ENOTDIR:
            AudioDeviceError(code: .notFound, device: deviceName, operation: "open", reason: "a folder in \(path) is not a folder",
                             hint: "check output.pipe")
        default:
            AudioDeviceError(code: .ioError, device: deviceName, operation: "open", reason: "\(path): \(FileReadError(errno: code))")
        }
    }

    private func writeBlocking(_ buffer: AudioBuffer) throws {
        guard pipe >= 0 else {
            throw AudioDeviceError(code: .ioError, device: deviceName, operation: "write", reason: "the output is not open")
        }
        guard buffer.channels == format.channels else {
            throw AudioDeviceError(code: .unsupportedFormat, device: deviceName, operation: "write",
                                   reason: "a block of \(buffer.channels) channels for a stream of \(format.channels)")
        }
        var samples = SampleMath.floats(buffer)
        let afterRest = lastWrite.map { ContinuousClock.now - $0 >= Self.idleGap } ?? true
        if afterRest { StreamConversion.fadeIn(&samples, channels: format.channels, frames: streamFormat.frames(in: Self.fadeIn)) }
        // An interrupted write says how many stream frames went in; the conversion stage
        // turns them into the clip's.
        try send(StreamConversion.bytes(samples, bits: format.bits))
        lastWrite = .now
    }

    /// True once snapserver has the pipe open for reading again, within `reopenGrace`. A
    /// FIFO's write end polls as an error while it has no reader.
    private func waitForReader() -> Bool {
        let deadline = ContinuousClock.now + Self.reopenGrace
        while ContinuousClock.now < deadline {
            var waiting = pollfd(fd: pipe, events: Int16(POLLOUT), revents: 0)
            if poll(&waiting, 1, 0) > 0, waiting.revents & Int16(POLLERR) == 0 { return true }
            usleep(10_000)
        }
        freshlyOpened = false
        return false
    }

    /// Bytes of the stream in `duration`.
    private func bytes(in duration: Duration) -> Int {
        format.sampleRate * Int(duration.milliseconds) / 1000 * format.bytesPerFrame
    }

    /// What the pipe holds and snapserver has not read yet, in bytes; nil if it cannot say.
    private func queuedInPipe() -> Int? {
        var queued: Int32 = 0
        return ioctl(pipe, UInt(FIONREAD), &queued) == 0 ? Int(queued) : nil
    }

    /// Writes all of `bytes`, keeping at most `aheadLimit` in the pipe; `interrupt()` ends a
    /// wait with what was written so far (in stream frames).
    private func send(_ bytes: [UInt8]) throws {
        // SIGPIPE, should snapserver go, is held back on this thread and taken here, so the
        // write fails with EPIPE instead of the signal ending the daemon.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        let ahead = self.bytes(in: Self.aheadLimit)
        let refill = self.bytes(in: Self.refillLevel)
        let bytesPerSecond = format.sampleRate * format.bytesPerFrame
        var written = 0
        var progress = ContinuousClock.now
        while written < bytes.count {
            let queued = queuedInPipe()
            // A pipe that cannot say what it holds takes what fits.
            let room = queued.map { ahead - $0 } ?? bytes.count - written
            var full = queued == nil
            if room > 0 {
                let count = bytes[written...].prefix(room).withUnsafeBytes { Glibc.write(pipe, $0.baseAddress, $0.count) }
                if count > 0 {
                    written += count
                    progress = .now
                    freshlyOpened = false
                    continue
                }
                switch errno {
                case EINTR: continue
                case EAGAIN: full = true
                case EPIPE:
                    var timeout = timespec(tv_sec: 0, tv_nsec: 0)
                    _ = sigtimedwait(&pipeSignal, nil, &timeout)
                    try readerGone()
                    continue
                case let code:
                    throw AudioDeviceError(code: .ioError, device: deviceName, operation: "write", reason: "\(path): \(FileReadError(errno: code))")
                }
            }
            if ContinuousClock.now - progress >= Self.stallLimit {
                throw AudioDeviceError(code: .stalled, device: deviceName, operation: "write", reason: "snapserver took no audio for 3 s",
                                       hint: "is snapserver running, and reading this pipe?")
            }
            // Until snapserver, reading in real time, has taken the pipe down to `refillLevel`;
            // or, if the pipe cannot say what it holds or is full all the same, until it has
            // room. The pipe is watched meanwhile for snapserver going away.
            let wait = full ? 1000 : max(1, ((queued ?? 0) - refill) * 1000 / bytesPerSecond)
            var waits = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
                         pollfd(fd: pipe, events: full ? Int16(POLLOUT) : 0, revents: 0)]
            _ = poll(&waits, 2, Int32(wait))
            if waits[0].revents & Int16(POLLIN) != 0 {
                clearInterrupt()
                throw WriteInterrupted(framesWritten: written / format.bytesPerFrame)
            }
            if waits[1].revents & Int16(POLLERR) != 0 { try readerGone() }
        }
    }

    /// snapserver has closed the pipe. Just after an open it comes back within
    /// `reopenGrace` (it read end-of-file in the instant before); otherwise it has gone, and
    /// this throws.
    private func readerGone() throws {
        if freshlyOpened, waitForReader() { return }
        Glibc.close(pipe)
        pipe = -1
        recovering = true
        throw AudioDeviceError(code: .disconnected, device: deviceName, operation: "write", reason: "snapserver stopped reading \(path)",
                               hint: "the clip plays again from its start once snapserver is back")
    }
}
