#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import Synchronization

/// A clip file arriving from a client, piece by piece. The bytes go to a hidden temporary file
/// in the clips folder; once all have come, `Jukebox.addClip(upload:…)` checks that the file
/// plays (converting a phone's recording with ffmpeg if need be) and stores it under a safe
/// name. Until then, and whenever anything fails, no file of it is left behind: `discard()`
/// removes it, and every front end calls it when the client goes away.
public actor ClipUpload {
    /// The name the client gave, as sent (made safe only when stored).
    public nonisolated let name: String
    /// The size announced, or with `exact` false the most that may come (a form's file part,
    /// whose size is known only at its end).
    public nonisolated let size: Int
    public nonisolated let exact: Bool
    /// The temporary file in the clips folder.
    nonisolated let temporaryPath: String
    nonisolated let clipsDirectory: String
    private let io: BlockingWorkQueue
    private let logger: Logger
    private var descriptor: Int32
    /// Open, with an `flock`, from the start to the end of the upload (stored or not): how a
    /// later start tells a temporary file that is in use from one an earlier run left.
    private var lock: Int32
    /// Its place among the uploads received at once (`UploadGate`).
    private let ticket: UploadGate.Ticket
    public private(set) var received = 0
    private var finished = false
    /// Why it was dropped for coming too slowly (`Pace`); nil while it keeps pace.
    public private(set) var droppedReason: String?
    private let clock: ElapsedClock
    private let startedAt: Duration
    /// The window of `Pace.window` being counted (from the first byte), and its bytes.
    private var windowStart: Duration?
    private var windowBytes = 0

    /// How fast an upload must come, in every front end: a client that sends a byte now and
    /// then would otherwise hold one of the `UploadGate`'s places for as long as it likes.
    /// Under the pace, the upload is dropped, its file removed and its place freed at once.
    public enum Pace {
        /// The first byte must come within this of the start.
        public static let firstByteWithin: Duration = .seconds(30)
        /// From the first byte, each whole window must bring `minimumBytesPerWindow`.
        public static let window: Duration = .seconds(10)
        /// 1 KiB/s over a window: a phone on a poor line sends far more.
        public static let minimumBytesPerWindow = 10 * 1024
    }

    /// The names of an upload's temporary files: `.upload-HEX.part`, and the `.flac` ffmpeg
    /// makes of it.
    static let temporaryPrefix = ".upload-"

    /// Starts an upload of `size` bytes (`exact`), or of at most `size`, into `clipsDirectory`.
    init(
        name: String, size: Int, exact: Bool = true, clipsDirectory: String, ticket: UploadGate.Ticket, io: BlockingWorkQueue,
        clock: ElapsedClock = ElapsedClock(ContinuousClock()), logger: Logger
    ) throws(JukeboxError) {
        self.name = name
        self.clock = clock
        self.startedAt = clock.now
        self.logger = logger
        self.size = size
        self.exact = exact
        self.clipsDirectory = clipsDirectory
        self.io = io
        self.ticket = ticket
        var random = SystemRandomNumberGenerator()
        let path = "\(clipsDirectory)/\(Self.temporaryPrefix)\(String(random.next() as UInt64, radix: 16)).part"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let error = errno
            let hint = FileReadError.isPermission(error) ? " (the daemon's user must be able to write there)" : ""
            throw .uploadRefused("cannot store an upload in the clips folder \(clipsDirectory): \(FileReadError.words(for: error, writing: true))\(hint)")
        }
        let lock = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if lock >= 0 { flock(lock, LOCK_EX | LOCK_NB) }
        self.descriptor = descriptor
        self.lock = lock
        self.temporaryPath = path
        ticket.holds(path)
        // Ends by itself once the upload has ended (it holds the upload only weakly).
        Task { [weak self] in await self?.keepPace() }
    }

    /// Wakes every `Pace.window` from the start and drops the upload if its first byte is
    /// late or a window that has ended fell short (windows are counted from the first byte,
    /// so one is seen at most a window after it ends); ends once the upload has.
    private func keepPace() async {
        var check = startedAt
        while descriptor >= 0, !finished, droppedReason == nil {
            check += Pace.window
            guard (try? await clock.sleep(until: check)) != nil else { return }
            guard descriptor >= 0, !finished, droppedReason == nil else { return }
            let now = clock.now
            if windowStart == nil {
                if now >= startedAt + Pace.firstByteWithin { await drop("no byte of it came within \(DurationText.format(Pace.firstByteWithin))") }
            } else if let reason = closedWindowsProblem(at: now) {
                await drop(reason)
            }
        }
    }

    /// Counts off the windows that have ended by `now`; the reason if one fell short.
    private func closedWindowsProblem(at now: Duration) -> String? {
        guard var start = windowStart else { return nil }
        while now >= start + Pace.window {
            if windowBytes < Pace.minimumBytesPerWindow {
                return "it came at \(windowBytes) bytes in \(DurationText.format(Pace.window)), under the \(Pace.minimumBytesPerWindow / 1024) KiB an upload must bring in each"
            }
            start += Pace.window
            windowBytes = 0
        }
        windowStart = start
        return nil
    }

    /// Ends an upload that fell under the pace: its file goes, and its place is free for
    /// another at once. The client is told why at its next bytes, or when it asks to add it.
    private func drop(_ reason: String) async {
        // Once: a write and the pace's own check may both find it short.
        guard descriptor >= 0 else { return }
        let (descriptor, path) = (descriptor, temporaryPath)
        self.descriptor = -1
        await io.run {
            if descriptor >= 0 { close(descriptor) }
            unlink(path)
        }
        release()
        // Told once it is true: the file is gone and the place free.
        droppedReason = reason
        logger.notice("the upload of \(name) was dropped after \(received) bytes: \(reason); its place is free for another", metadata: ["file": "\(name)"])
    }

    private var droppedError: JukeboxError? {
        droppedReason.map { .uploadRefused("the upload of \(name) was dropped: \($0); nothing of it was kept, send it again") }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if lock >= 0 { close(lock) }
    }

    /// The upload is over (stored, refused or abandoned): its lock and its place go.
    func release() {
        if lock >= 0 { close(lock) }
        lock = -1
        ticket.release()
    }

    /// Removes the temporary files of uploads an earlier run left in `folder` (it was killed
    /// while receiving or converting one): those no process holds the lock of. Returns how
    /// many were removed. Blocking.
    public static func removeLeftovers(in folder: String) -> Int {
        let names = FilePath.names(in: folder).filter { name in
            name.hasPrefix(temporaryPrefix) && (name.hasSuffix(".part") || name.hasSuffix(".part.flac"))
        }
        var inUse = Set<String>()
        var removed = 0
        for name in names.sorted() where name.hasSuffix(".part") {
            let path = FilePath.join(folder, name)
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                inUse.insert(name)
            } else if unlink(path) == 0 {
                removed += 1
            }
        }
        for name in names where name.hasSuffix(".part.flac") && !inUse.contains(String(name.dropLast(5))) {
            if unlink(FilePath.join(folder, name)) == 0 { removed += 1 }
        }
        return removed
    }

    public var isComplete: Bool { exact ? received == size : received > 0 }

    /// Appends the next bytes; more than the announced size (or the most allowed) is refused.
    public func write(_ bytes: [UInt8]) async throws(JukeboxError) {
        if let droppedError { throw droppedError }
        let now = clock.now
        if let reason = closedWindowsProblem(at: now) {
            await drop(reason)
            throw droppedError ?? .uploadRefused(reason)
        }
        if windowStart == nil, !bytes.isEmpty { windowStart = now }
        windowBytes += bytes.count
        guard descriptor >= 0 else { throw .uploadRefused("the upload of \(name) was already ended") }
        guard received + bytes.count <= size else {
            if !exact { throw .uploadTooLarge(name: Self.safeName(name), size: received + bytes.count, limit: size) }
            throw .uploadRefused("more than the \(size) bytes announced for \(name) arrived")
        }
        let descriptor = descriptor
        let failure: Int32? = await io.run {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        if let failure { throw notStored(failure) }
        received += bytes.count
    }

    /// A write or fsync of the received file failed (a full disk, say); the caller discards it.
    private func notStored(_ failure: Int32) -> JukeboxError {
        .uploadRefused("cannot store \(name) in the clips folder \(FilePath.directory(of: temporaryPath)): \(FileReadError.words(for: failure, writing: true)); nothing of it was kept")
    }

    /// Closes the file once every byte is there; the path of what was received.
    func complete() async throws(JukeboxError) -> String {
        if let droppedError { throw droppedError }
        guard isComplete else {
            throw .uploadRefused(exact ? "only \(received) of the \(size) bytes of \(name) arrived" : "\(name) is empty")
        }
        if descriptor >= 0 {
            let descriptor = descriptor
            self.descriptor = -1
            let failure = await io.run { () -> Int32? in
                defer { close(descriptor) }
                return fsync(descriptor) == 0 ? nil : errno
            }
            if let failure { throw notStored(failure) }
        }
        finished = true
        return temporaryPath
    }

    /// Removes the temporary file (a failed, refused or abandoned upload leaves nothing).
    /// `logged`: false where the caller says in its own words what was not kept (a fetch).
    public func discard(logged: Bool = true) async {
        let (descriptor, path) = (descriptor, temporaryPath)
        let abandoned = descriptor >= 0 || !finished
        self.descriptor = -1
        await io.run {
            if descriptor >= 0 { close(descriptor) }
            unlink(path)
        }
        release()
        // Said once it is true: the partial file is gone.
        if abandoned && logged {
            let of = exact ? " of its \(size)" : ""
            logger.info("the upload of \(name) ended after \(received)\(of) bytes; nothing of it was kept", metadata: ["file": "\(name)"])
        }
    }

    /// Whether a character may be in a stored name: not a control character (C0, DEL, C1 such
    /// as U+0085), a line or paragraph separator (U+2028, U+2029), a format character that
    /// reorders or hides text (U+202E and the other direction marks, U+200B), nor `\`. The
    /// zero-width joiner stays: emoji sequences are made with it.
    static func isKept(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "\\" { return false }
        if scalar == "\u{200D}" { return true }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return false
        default: return true
        }
    }

    /// The longest stored name, in bytes.
    public static let maxNameLength = 100

    /// `name` as it may be stored: no folders, no control, line-breaking or direction-changing
    /// characters, never starting with a dot or a space (so never hidden), at most
    /// `maxNameLength` bytes (the extension kept); `upload` when nothing is left.
    public static func safeName(_ name: String) -> String {
        let last = name.split(separator: "/").last.map(String.init) ?? ""
        var cleaned = String(String.UnicodeScalarView(last.unicodeScalars.filter(isKept)))
        // Until nothing changes: " .x" loses its space, then its dot.
        while true {
            let before = cleaned
            while cleaned.hasPrefix(".") { cleaned.removeFirst() }
            cleaned = cleaned.trimmingSpaces
            if cleaned == before { break }
        }
        if cleaned.isEmpty { cleaned = "upload" }
        guard cleaned.utf8.count > maxNameLength else { return cleaned }
        let dot = cleaned.lastIndex(of: ".")
        let ext = dot.map { String(cleaned[$0...]) }.flatMap { $0.utf8.count <= 10 ? $0 : nil } ?? ""
        var stem = String(cleaned.dropLast(ext.count))
        while stem.utf8.count + ext.utf8.count > maxNameLength { stem.removeLast() }
        return stem + ext
    }
}

extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}

/// At most `limit` uploads are received, checked and converted at once, from every front end
/// together: each holds a temporary file of up to `maxUploadSize` in the clips folder, and
/// memory while it is decoded. One more is refused at once (`uploadsBusy`: HTTP 503 with
/// `Retry-After`), never queued behind the others.
public final class UploadGate: Sendable {
    public static let limit = 2
    /// What a refused client is told to wait, in seconds.
    public static let retryAfter = 10

    private let count = Mutex(0)
    let limit: Int
    /// The temporary files of the uploads holding a place, by place: removed at a stop
    /// (`removeUnfinished`), so an upload cut off by it leaves nothing in the clips folder.
    private let files = Mutex<(next: UInt64, paths: [UInt64: String])>((0, [:]))

    public init(limit: Int = UploadGate.limit) { self.limit = limit }

    /// A place, or nil when `limit` uploads are under way.
    func enter() -> Ticket? {
        let entered = count.withLock { count -> Bool in
            guard count < limit else { return false }
            count += 1
            return true
        }
        return entered ? Ticket(self) : nil
    }

    fileprivate func leave(_ number: UInt64) {
        _ = files.withLock { $0.paths.removeValue(forKey: number) }
        count.withLock { $0 = max(0, $0 - 1) }
    }

    fileprivate func number() -> UInt64 {
        files.withLock { files in
            files.next += 1
            return files.next
        }
    }

    fileprivate func hold(_ path: String, for number: UInt64) { files.withLock { $0.paths[number] = path } }

    /// At a stop: removes the temporary files of the uploads still under way (and of their
    /// conversions). Blocking, briefly (unlink).
    public func removeUnfinished() {
        let paths = files.withLock { files in
            defer { files.paths = [:] }
            return Array(files.paths.values)
        }
        for path in paths {
            unlink(path)
            unlink(path + ".flac")
        }
    }

    /// One upload's place; given back once, at the end of the upload or when it is dropped.
    final class Ticket: Sendable {
        private let gate: UploadGate
        private let held = Mutex(true)
        private let number: UInt64

        fileprivate init(_ gate: UploadGate) {
            self.gate = gate
            number = gate.number()
        }

        /// The upload's temporary file, removed at a stop if the upload is still under way.
        func holds(_ path: String) { gate.hold(path, for: number) }

        func release() {
            if held.withLock({ let was = $0; $0 = false; return was }) { gate.leave(number) }
        }

        deinit { release() }
    }
}
