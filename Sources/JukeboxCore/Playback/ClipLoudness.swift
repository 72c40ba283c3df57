import FoundationEssentials
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The one owner of clips' measured loudness, and of the session's `loudness` target: what
/// gain brings a clip there (ReplayGain for clips, measured here rather than read from tags).
///
/// With a target, clips are measured in the background, one at a time, on the meter's own
/// thread, at start-up and after a reload or an edit; an upload is measured before it is
/// answered. Figures are kept beside the state file (`NAME.loudness.json`) by path, size and
/// modification time, so a clip is measured once, and again only when its file changes. Until
/// a clip is measured it plays as recorded.
public actor ClipLoudness {
    public struct Figure: Sendable, Equatable, Codable {
        var size: Int64
        /// Nanoseconds since the epoch.
        var modified: Int64
        var loudness: Loudness
    }

    /// Figures kept at most, and the most the file they are kept in may hold; past either,
    /// the figures measured longest ago go first.
    public struct Limits: Sendable, Equatable {
        public var entries: Int
        public var fileBytes: Int
        public init(entries: Int = 10_000, fileBytes: Int = 4 << 20) {
            self.entries = entries
            self.fileBytes = fileBytes
        }
    }

    private let meter: (any LoudnessMeter)?
    private let decoder: any ClipDecoder
    private let file: String?
    private let limits: Limits
    private let logger: Logger
    private let io = BlockingWorkQueue(label: "jukeboxd.loudness-file")
    private var figures: [String: Figure] = [:]
    /// Paths in the order they were measured, for the bound.
    private var order: [String] = []
    private var target: Double?
    private var waiting: [ClipSource] = []
    private var worker: Task<Void, Never>?
    /// Measurements under way, by path: an upload measured for its answer and the background
    /// work may ask for the same file at once, and it is decoded once.
    private var running: [String: Task<Bool, Never>] = [:]
    private var restored = false

    /// `file`: where figures are kept (nil: only in memory). `meter` nil: nothing is measured
    /// and every clip plays as recorded.
    public init(meter: (any LoudnessMeter)?, decoder: any ClipDecoder, file: String?, limits: Limits = Limits(), logger: Logger) {
        self.meter = meter
        self.decoder = decoder
        self.file = file
        self.limits = limits
        self.logger = logger
    }

    /// Where a daemon whose state file is `statePath` keeps the figures.
    public static func file(besideState statePath: String) -> String {
        StateFile.sibling(of: statePath, ".loudness.json")
    }

    /// The session's target and clips: clips not measured (or changed since) are measured in
    /// the background. Without a target nothing is measured: no work, and no file.
    public func adopt(target: Double?, sources: [ClipSource]) async {
        self.target = target
        guard target != nil else { return }
        await restore()
        guard meter != nil else { return }
        let known = Set(waiting.map(\.path))
        waiting += sources.filter { !$0.path.isEmpty && !known.contains($0.path) }
        guard worker == nil, !waiting.isEmpty else { return }
        worker = Task { await self.work() }
    }

    /// The gain in dB that brings `source` to the target, capped so its true peak stays at
    /// −1 dBTP; 0 without a target, or before the clip is measured.
    public func gain(for source: ClipSource) -> Double {
        guard let target, let figure = figures[source.path] else { return 0 }
        return figure.loudness.gain(toward: target)
    }

    /// The target, and the figures of `sources` (nil where not measured).
    public func report(_ sources: [ClipSource]) -> (target: Double?, figures: [Loudness?]) {
        (target, sources.map { figures[$0.path]?.loudness })
    }

    /// Measures `source` now, unless its figure is current (or there is no target): for an
    /// upload, before it is answered.
    @discardableResult
    public func measureNow(_ source: ClipSource) async -> Loudness? {
        guard target != nil else { return nil }
        await restore()
        await measure(source)
        return figures[source.path]?.loudness
    }

    private func work() async {
        var measured = 0
        while !Task.isCancelled, !waiting.isEmpty {
            let source = waiting.removeFirst()
            if await measure(source) { measured += 1 }
        }
        worker = nil
        if measured > 0 {
            logger.info("measured the loudness of \(Plural.count(measured, "clip"))")
        }
    }

    /// True when it was measured (it was new or had changed).
    @discardableResult
    private func measure(_ source: ClipSource) async -> Bool {
        guard meter != nil else { return false }
        if let measuring = running[source.path] { return await measuring.value }
        let measuring = Task { await self.measureFile(source) }
        running[source.path] = measuring
        defer { running[source.path] = nil }
        return await measuring.value
    }

    private func measureFile(_ source: ClipSource) async -> Bool {
        guard let meter else { return false }
        let path = source.path
        guard let (size, modified) = await io.run({ Self.identity(of: path) }) else { return false }
        if let figure = figures[path], figure.size == size, figure.modified == modified { return false }
        do {
            let loudness = try await meter.measure(source, decoder: decoder)
            figures[path] = Figure(size: size, modified: modified, loudness: loudness)
            order.removeAll { $0 == path }
            order.append(path)
            dropOldest(toKeep: limits.entries)
            await save()
            return true
        } catch {
            logger.warning("clip \(source.file): \(error); it plays as recorded", metadata: ["file": "\(source.file)"])
            return false
        }
    }

    private func dropOldest(toKeep count: Int) {
        guard order.count > count else { return }
        for path in order.prefix(order.count - count) { figures[path] = nil }
        order.removeFirst(order.count - count)
    }

    /// Size and modification time, or nil for a file that is not there.
    private static func identity(of path: String) -> (Int64, Int64)? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return (Int64(info.st_size), Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    /// The figures' file format. 2: a mono clip is measured as it is heard, on both channels
    /// (figures of version 1 are 3 LU too quiet for mono clips, and are measured again).
    static let formatVersion = 2

    private struct Stored: Codable {
        var version: Int
        var figures: [String: Figure]
        var order: [String]
    }

    private func restore() async {
        guard !restored else { return }
        restored = true
        guard let file else { return }
        let read = await io.run { [limits] in Result { () throws(FileReadError) in try FilePath.read(file, limit: limits.fileBytes) } }
        switch read {
        case .failure(let error):
            if !error.isMissing { logger.warning("cannot read the loudness figures \(file): \(error); clips are measured again") }
        case .success(let bytes):
            guard let stored = try? JSONDecoder().decode(Stored.self, from: Data(bytes)) else {
                logger.warning("the loudness figures \(file) are not ones this daemon wrote; clips are measured again")
                return
            }
            guard stored.version == Self.formatVersion else {
                logger.info("the loudness figures \(file) are from another version of jukeboxd; clips are measured again")
                return
            }
            figures = stored.figures
            order = stored.order.filter { stored.figures[$0] != nil }
        }
    }

    /// Writes the figures; when they would not fit the file's limit, the oldest are dropped
    /// until they do, so the file is always one the next start can read.
    private func save() async {
        guard let file else { return }
        var bytes: [UInt8] = []
        while true {
            guard let encoded = try? JSONEncoder().encode(Stored(version: Self.formatVersion, figures: figures, order: order)) else {
                logger.warning("cannot save the loudness figures: they could not be written as JSON; clips are measured again at the next start")
                return
            }
            bytes = Array(encoded)
            guard bytes.count > limits.fileBytes, !order.isEmpty else { break }
            // Roughly in proportion, and at least one.
            dropOldest(toKeep: min(order.count - 1, order.count * limits.fileBytes / bytes.count))
        }
        let written = await io.run { [bytes] in Result { try AtomicFile.write(bytes, to: file, mode: 0o600) } }
        if case .failure(let error) = written {
            logger.warning("cannot save the loudness figures: \(error); clips are measured again at the next start")
        }
    }
}
