import JukeboxCore
import JukeboxSndFile
import JukeboxTestSupport
import Logging
import Synchronization

/// For the tests of the core's front ends (the dispatcher, the socket): a real core over three one-second clips (ward, water, walk) and a `NullSink` named
/// "fake", not running: requests change its queue and settings, and nothing plays. With a
/// state file, changes are saved there before they are answered.
public struct TestCore: Sendable {
    public enum State: Sendable {
        case none
        /// Saved in the test's folder.
        case saved
        /// Every save fails (the state file's folder is a regular file).
        case failing
    }

    public let folder: TemporaryDirectory
    public let core: Jukebox
    /// While set, `reload` finds these problems in the session file.
    public let reloadProblems: Problems

    public final class Problems: Sendable {
        let lines = Mutex<[String]?>(nil)
        public func set(_ problems: [String]?) { lines.withLock { $0 = problems } }
    }

    public var statePath: String { folder.file("state.json") }

    public init(queueLimit: Int = 10_000, state: State = .none, log: (any LogHandler)? = nil, mediaFetcher: (any MediaFetcher)? = nil) async throws {
        folder = try TemporaryDirectory()
        let tone = WAVFile.bytes(Array(repeating: 0.1, count: 8000), encoding: .s16, rate: 8000, channels: 1)
        for id in ["ward", "water", "walk"] { _ = try folder.write("\(id).wav", tone) }
        let sessionPath = try folder.write("test.json", text: #"{"clips": [{"file": "ward.wav"}, {"file": "water.wav"}, {"file": "walk.wav"}], "cue": "ward.wav"}"#)
        let session = try SessionLoader.load(path: sessionPath)
        let catalog = await ClipCatalog.probing(session, with: SndFileDecoder())
        let problems = Problems()
        reloadProblems = problems
        let stateFile: StateFile? = switch state {
        case .none: nil
        case .saved: StateFile(path: folder.file("state.json"))
        case .failing: StateFile(path: try folder.write("not-a-folder", [0]) + "/state.json")
        }
        core = Jukebox.test(
            catalog, decoder: SndFileDecoder(), makeSink: { _, _ in NullSink(deviceName: "fake") }, stateFile: stateFile,
            loadSession: { () throws(SessionLoadError) -> Session in
                if let lines = problems.lines.withLock({ $0 }) { throw SessionLoadError(kind: .invalid, problems: lines) }
                return try SessionLoader.load(path: sessionPath)
            },
            time: TimeSource(wallClock: { 1_000 }), speechFolder: folder.file("speech"), queueLimit: queueLimit,
            logger: Logger(label: "test") { _ in log ?? SwiftLogNoOpLogHandler() }, mediaFetcher: mediaFetcher)
    }

    /// The tickets waiting, in order.
    public func waiting() async -> [UInt64] { await core.snapshot().queue.waiting.map(\.ticket) }

    /// The state file as saved, or "" if there is none.
    public func savedState() -> String {
        (try? String(decoding: FilePath.read(statePath, limit: 1 << 20), as: UTF8.self)) ?? ""
    }
}

extension Jukebox {
    /// A core as a test builds one: over `catalog`, with fake clips, a fake output, a manual
    /// clock and a wall clock that stands at 1 000 s, a fixed seed, and nothing saved,
    /// unless the test says otherwise. `reload` reads the catalog's session again, unless
    /// `loadSession` says otherwise.
    /// Builds a test's output without a bed.
    public typealias SinkFactory = @Sendable (OutputConfig, BedSettings?) -> any AudioSink

    public static func test(
        _ catalog: ClipCatalog, decoder: any ClipDecoder = Fixtures.decoder([]), makeSink: @escaping SinkFactory = { _, _ in FakeSink() },
        stateFile: StateFile? = nil, loadSession: SessionSource? = nil, time: TimeSource = TimeSource(clock: ManualClock(), wallClock: { 1_000 }),
        seed: UInt64 = 1, speechFolder: String? = nil, queueLimit: Int = ClipPlayQueue.defaultCapacity, logger: Logger = .quiet,
        vetClientDevice: (@Sendable (String) async -> String?)? = nil, mediaFetcher: (any MediaFetcher)? = nil
    ) -> Jukebox {
        let session = catalog.session
        return Jukebox(
            catalog: catalog, decoder: decoder, makeOutput: { AudioOutput(makeSink($0, $1)) }, stateFile: stateFile, loadSession: loadSession ?? { session },
            configuration: Configuration(
                queueLimit: queueLimit, generator: SeededGenerator(seed: seed), time: time, speechFolder: speechFolder, vetClientDevice: vetClientDevice,
                mediaFetcher: mediaFetcher),
            logger: logger)
    }
}
