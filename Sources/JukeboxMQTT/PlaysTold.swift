import JukeboxCore
import JukeboxFiles
import Logging

/// The last play MQTT's Playback events have told of (its `PlayRecord.seq`): MQTT's own, kept
/// in a file of its own beside the state (`STATE.mqtt-told`), so no play is told twice across
/// a restart, and none that ended while the broker was away is left untold. Written whole and
/// durably after each play the broker acknowledged, on a thread of its own.
actor PlaysTold {
    /// The file; nil: kept in memory only (a daemon without a state file).
    let path: String?
    private(set) var through: UInt64 = 0
    /// The plays after which older ones went untold (more than the history keeps), each logged once.
    private var gapsLogged: Set<UInt64> = []
    private let io = BlockingWorkQueue(label: "jukeboxd.mqtt-told")
    private let logger: Logger

    /// Where a daemon whose state file is `statePath` keeps it.
    static func file(besideState statePath: String) -> String { StateFile.sibling(of: statePath, ".mqtt-told") }
    static let header = "jukeboxd-mqtt-told "
    /// Far more than the one line it holds.
    static let maxSize = 256

    init(path: String?, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    /// Reads where the last run left off. Without a file (the first run, or one before the
    /// count was MQTT's own), the plays of earlier runs are not told: from `earlierRuns`, the
    /// last of them. `lastPlay`: the last play so far; a count beyond it is not this state's.
    func load(earlierRuns: UInt64, lastPlay: UInt64) async {
        guard let path else {
            through = earlierRuns
            return
        }
        let read = await io.run { Result { () throws(FileReadError) in try FilePath.read(path, limit: Self.maxSize) } }
        switch read {
        case .success(let bytes):
            let text = String(decoding: bytes, as: UTF8.self)
            if text.hasPrefix(Self.header), let seq = UInt64(text.dropFirst(Self.header.count).prefix { $0 != "\n" }), seq <= lastPlay {
                through = seq
            } else {
                logger.warning("\(path) is not a count of plays told that this jukeboxd wrote; the plays of earlier runs are not told as Playback events")
                through = earlierRuns
            }
        case .failure(let error):
            if !error.isMissing { logger.warning("cannot read \(path): \(error); the plays of earlier runs are not told as Playback events") }
            through = earlierRuns
        }
    }

    /// Of `plays` (oldest first, after `through`), when older ones than the first are gone
    /// from the history: said once.
    func noteGap(before plays: [PlayRecord]) {
        guard through > 0, let first = plays.first, first.seq > through + 1, !gapsLogged.contains(first.seq) else { return }
        gapsLogged.insert(first.seq)
        logger.warning("\(Plural.count(Int(first.seq - through - 1), "play")) ended while MQTT could not be told, more than the \(ClipPlayQueue.historyLimit) the history keeps; the oldest of them are not told as Playback events")
    }

    /// Every play up to `seq` has been told of: kept, and written.
    func mark(_ seq: UInt64) async {
        guard seq > through else { return }
        through = seq
        guard let path else { return }
        let text = Array("\(Self.header)\(seq)\n".utf8)
        let written = await io.run { () -> Result<Void, any Error> in
            Result { try AtomicFile.write(text, to: path, mode: 0o640) }
        }
        if case .failure(let error) = written { logger.error("cannot keep the count of plays told in \(path): \(error)") }
    }
}
