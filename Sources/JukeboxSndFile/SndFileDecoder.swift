import CSndFile
import Glibc
import JukeboxAudio
import Synchronization

/// Decodes clips with libsndfile: every WAV flavour (8/16/24/32-bit integer, 32/64-bit float,
/// any rate and channel count), plus FLAC, Ogg/Vorbis, AIFF and the rest libsndfile reads.
/// This is the only file that imports libsndfile.
public struct SndFileDecoder: ClipDecoder {
    public init() {}

    public func open(_ source: ClipSource) async throws -> any DecodedClip {
        let queue = BlockingWorkQueue(label: "jukebox.decode")
        return try await queue.run { try SndFileHandle(source: source, queue: queue) }
    }
}

/// Owns one `SNDFILE*`. It is `@unchecked Sendable` because the handle is only touched on
/// `queue`, a serial queue, which serialises every libsndfile call made through it.
///
/// It decodes up to a second ahead of what is asked (`readAhead`), and answers reads from that
/// without going to `queue`: each hop there and back wakes two threads, which costs more than
/// the decoding itself. A seek drops what was read ahead.
final class SndFileHandle: DecodedClip, @unchecked Sendable {
    let format: AudioFormat
    let frameCount: Int
    private let file: String
    private let queue: BlockingWorkQueue
    private var handle: OpaquePointer?
    /// Decoded and not yet read: the block, and how many of its frames were read.
    private let ahead = Mutex<(block: AudioBuffer, used: Int)?>(nil)
    /// The first read after opening or seeking decodes only what it asks, so the clip's first
    /// audio is not held up by decoding a second of it (a compressed file, on a small board).
    private let readsAhead = Atomic<Bool>(false)

    /// At most a second ahead. No read decodes more than one of the player's blocks may hold
    /// (`AudioFormat.maxBlockFrames`), whatever it asks for, so a file claiming 1 024 channels cannot make
    /// one read allocate gigabytes.
    static let readAhead: Duration = .seconds(1)
    /// Held while a file is opened: see `init`.
    private static let opening = Mutex(())

    init(source: ClipSource, queue: BlockingWorkQueue) throws {
        self.file = source.file
        self.queue = queue
        let descriptor = try Self.openChecked(source)
        var info = SF_INFO()
        // libsndfile reads the descriptor that was checked, and closes it: on sf_close, and
        // also when the open fails, so it is never closed here (a second close would close
        // whatever another thread had opened under that number meanwhile). Why an open
        // failed is kept in one variable for the whole process, so opens take turns, and the
        // reason read is this open's.
        let opened = Self.opening.withLock { _ -> Result<OpaquePointer, ClipDecodeError> in
            guard let handle = sf_open_fd(descriptor, Int32(SFM_READ), &info, Int32(SF_TRUE)) else {
                return .failure(ClipDecodeError(file: source.file, reason: Self.explain(String(cString: sf_strerror(nil)))))
            }
            return .success(handle)
        }
        let handle = try opened.get()
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(handle)
            throw ClipDecodeError(file: source.file, reason: "has no audio channels or no sample rate")
        }
        self.handle = handle
        self.frameCount = Int(info.frames)
        self.format = AudioFormat(
            sampleFormat: Self.sampleFormat(for: info.format), sampleRate: Int(info.samplerate), channels: Int(info.channels))
        // Float files read as integers must saturate rather than wrap on overs.
        sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
    }

    deinit {
        if let handle { sf_close(handle) }
    }

    /// Opens the clip's file, and checks what was opened rather than the path beforehand, so
    /// nothing can be swapped in between: it must be a regular file (a FIFO would hang the
    /// decoder, a device would never end) and, for `within`, its real path must lie inside
    /// that folder.
    static func openChecked(_ source: ClipSource) throws -> Int32 {
        let descriptor = open(source.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else {
            let reason = switch errno {
            case ENOENT, ENOTDIR: "no such file (looked for \(source.path))"
            default: "\(FileReadError(errno: errno))"
            }
            throw ClipDecodeError(file: source.file, reason: reason)
        }
        var info = stat()
        fstat(descriptor, &info)
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR:
            Glibc.close(descriptor)
            throw ClipDecodeError(file: source.file, reason: "is a folder, not an audio file")
        default:
            Glibc.close(descriptor)
            throw ClipDecodeError(file: source.file, reason: "not a regular file (a FIFO, socket or device cannot be a clip)")
        }
        if let folder = source.within {
            let opened = FilePath.resolved("/proc/self/fd/\(descriptor)")
            guard let opened, FilePath.isInside(opened, FilePath.resolved(folder) ?? folder) else {
                Glibc.close(descriptor)
                throw ClipDecodeError(file: source.file, reason: "the file opened is outside the clips folder \(folder) (a symlink was swapped in); refused")
            }
        }
        return descriptor
    }

    /// The pipeline format that carries this file's samples without loss.
    static func sampleFormat(for format: Int32) -> SampleFormat {
        switch format & Int32(SF_FORMAT_SUBMASK) {
        case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_PCM_16),
             Int32(SF_FORMAT_ULAW), Int32(SF_FORMAT_ALAW), Int32(SF_FORMAT_IMA_ADPCM), Int32(SF_FORMAT_MS_ADPCM),
             Int32(SF_FORMAT_GSM610), Int32(SF_FORMAT_DWVW_12), Int32(SF_FORMAT_DWVW_16):
            return .s16
        case Int32(SF_FORMAT_PCM_24), Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_DWVW_24):
            return .s32
        default:
            return .float32
        }
    }

    static func explain(_ reason: String) -> String {
        let lower = reason.lowercased()
        if lower.contains("unknown format") || lower.contains("not recognised") {
            return "not an audio file libsndfile can read (\(reason))"
        }
        if lower.contains("permission") { return "permission denied (check the file's owner and mode)" }
        return reason
    }

    func read(maxFrames: Int) async throws -> AudioBuffer? {
        if let block = takeAhead(maxFrames) { return block }
        let extra = readsAhead.exchange(true, ordering: .relaxed) ? format.frames(in: Self.readAhead) : 0
        let chunk = min(max(maxFrames, extra), format.maxBlockFrames)
        guard let block = try await queue.run({ try self.readBlocking(maxFrames: chunk) }) else { return nil }
        ahead.withLock { $0 = (block, 0) }
        return takeAhead(maxFrames)
    }

    /// Up to `maxFrames` of what was read ahead; nil when nothing is left of it.
    private func takeAhead(_ maxFrames: Int) -> AudioBuffer? {
        ahead.withLock { ahead in
            guard let (block, used) = ahead else { return nil }
            let end = min(used + max(maxFrames, 1), block.frames)
            ahead = end < block.frames ? (block, end) : nil
            return used == 0 && end == block.frames ? block : block.frames(used..<end)
        }
    }

    private func readBlocking(maxFrames: Int) throws -> AudioBuffer? {
        guard let handle else { return nil }
        let channels = format.channels
        let count = maxFrames * channels
        let samples: AudioSamples
        var frames = 0
        switch format.sampleFormat {
        case .s16:
            var data = [Int16](repeating: 0, count: count)
            frames = Int(data.withUnsafeMutableBufferPointer { sf_readf_short(handle, $0.baseAddress, sf_count_t(maxFrames)) })
            data.removeLast(count - frames * channels)
            samples = .s16(data)
        case .s32:
            var data = [Int32](repeating: 0, count: count)
            frames = Int(data.withUnsafeMutableBufferPointer { sf_readf_int(handle, $0.baseAddress, sf_count_t(maxFrames)) })
            data.removeLast(count - frames * channels)
            samples = .s32(data)
        case .float32:
            var data = [Float](repeating: 0, count: count)
            frames = Int(data.withUnsafeMutableBufferPointer { sf_readf_float(handle, $0.baseAddress, sf_count_t(maxFrames)) })
            data.removeLast(count - frames * channels)
            SampleMath.makeFinite(&data)
            samples = .float32(data)
        }
        if frames == 0 {
            let error = sf_error(handle)
            if error != 0 { throw ClipDecodeError(file: file, reason: "cannot be decoded: " + String(cString: sf_strerror(handle))) }
            return nil
        }
        return AudioBuffer(samples: samples, channels: channels)
    }

    func seek(toFrame frame: Int) async throws {
        ahead.withLock { $0 = nil }
        readsAhead.store(false, ordering: .relaxed)
        let file = self.file
        try await queue.run {
            guard let handle = self.handle else { return }
            if sf_seek(handle, sf_count_t(frame), SEEK_SET) < 0 {
                throw ClipDecodeError(file: file, reason: "cannot seek to frame \(frame): " + String(cString: sf_strerror(handle)))
            }
        }
    }

    func close() async {
        await queue.run {
            if let handle = self.handle { sf_close(handle) }
            self.handle = nil
        }
    }
}
