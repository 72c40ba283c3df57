#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FoundationEssentials

/// The state file on disk. A write is atomic and durable: a temporary file is written and
/// fsynced, renamed over the old one, and the folder is fsynced, so after a crash the file is
/// either the old state or the new one, never a mix. Runs its blocking calls on its own thread.
public struct StateFile: Sendable {
    public let path: String
    private let queue = BlockingWorkQueue(label: "jukebox.state")
    /// The largest state file read: a full queue at the largest `--queue-limit` with long
    /// paths still fits.
    public static let maxFileSize = 512 << 20

    public init(path: String) { self.path = path }

    public enum LoadResult: Sendable, Equatable {
        case missing
        case loaded(PersistedState)
        /// The file could not be used; it was moved to `movedTo` and the daemon starts empty.
        case corrupt(movedTo: String, reason: String)
        /// The file could not be used, and moving it aside failed too: saving would
        /// overwrite it, so nothing may be saved until someone looks.
        case unusable(reason: String)
    }

    public func load(now: Double = SystemWallClock.now()) async -> LoadResult {
        await queue.run { [path] in
            let bytes: [UInt8]
            do {
                bytes = try FilePath.read(path, limit: Self.maxFileSize)
            } catch let error as FileReadError {
                if error.isMissing { return .missing }
                return Self.moveAside(path, now: now, reason: "\(error)")
            } catch {
                return Self.moveAside(path, now: now, reason: "\(error)")
            }
            do {
                let state = try JSONDecoder().decode(PersistedState.self, from: Data(bytes))
                guard state.version == 1 else { return Self.moveAside(path, now: now, reason: "unknown version \(state.version)") }
                return .loaded(state)
            } catch {
                return Self.moveAside(path, now: now, reason: "not a valid state file")
            }
        }
    }

    /// Writes `state` durably; returns the file's size.
    @discardableResult
    public func save(_ state: PersistedState) async throws -> Int {
        try await queue.run { [path] in try Self.writeAtomically(state, to: path) }
    }

    static func writeAtomically(_ state: PersistedState, to path: String) throws -> Int {
        let folder = FilePath.directory(of: path)
        try makeFolders(folder)
        do {
            return try AtomicFile.replace(path, mode: 0o640) { descriptor, temporary in
                try StateEncoder.write(state, to: descriptor, path: temporary)
            }
        } catch let error as FileWriteError {
            throw StateFileError(path: path, errno: error.errno)
        } catch let error as StateFileError {
            // Named as the state file, not its temporary.
            throw StateFileError(path: path, errno: error.errno, detail: error.detail)
        }
    }

    static func makeFolders(_ folder: String) throws(StateFileError) {
        do throws(FileWriteError) { try FilePath.makeFolders(folder) } catch { throw StateFileError(path: error.path, errno: error.errno) }
    }

    /// Creates the state file's folder if needed and checks that nobody else can write in it:
    /// it must belong to this user and be writable by no one else, so another local user
    /// cannot plant a file or a symlink where the daemon writes. `sharedFolder` is the one
    /// exception allowed to be group-writable: the folder systemd made for the service
    /// (`$STATE_DIRECTORY`). Call before the state is loaded.
    /// `creating` false (`--check`): a folder not there yet is not made; its nearest existing
    /// parent must be a folder this user can make it in.
    public func checkFolder(sharedFolder: String? = nil, uid: uid_t = geteuid(), creating: Bool = true) throws(StateLocationError) {
        let folder = FilePath.directory(of: FilePath.absolute(path))
        if !creating, access(folder, F_OK) != 0 {
            var parent = folder
            while access(parent, F_OK) != 0, parent != "/" { parent = FilePath.directory(of: parent) }
            var info = stat()
            guard stat(parent, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, access(parent, W_OK | X_OK) == 0 else {
                throw StateLocationError(message: "cannot create the state folder \(folder): \(parent) is not a folder this user can write in; choose another with --state", exitCode: 73)
            }
            return
        }
        do { try Self.makeFolders(folder) } catch {
            throw StateLocationError(message: "cannot create the state folder \(folder): \(FileReadError(errno: error.errno)); choose another with --state", exitCode: 73)
        }
        var info = stat()
        guard stat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw StateLocationError(message: "the state folder \(folder) is not a folder; choose another with --state", exitCode: 73)
        }
        let mode = info.st_mode & 0o777
        let shared = sharedFolder.map { FilePath.normalize($0) == FilePath.normalize(folder) } ?? false
        if info.st_uid != uid {
            throw StateLocationError(
                message: "the state folder \(folder) belongs to \(UserName.of(info.st_uid)), not to \(UserName.of(uid)) who runs jukeboxd; another user could replace the state, so it is not used: choose a folder of your own with --state", exitCode: 78)
        }
        if mode & 0o002 != 0 || (mode & 0o020 != 0 && !shared) {
            throw StateLocationError(
                message: "the state folder \(folder) is writable by \(mode & 0o002 != 0 ? "everyone" : "its group") (mode \(String(mode, radix: 8))); another user could replace the state, so it is not used: run chmod go-w \(folder), or choose another folder with --state", exitCode: 78)
        }
    }

    /// The state folder systemd made for the service (`StateDirectory=`), if any.
    public static func serviceFolder(_ environment: [String: String]) -> String? {
        environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
    }

    /// What the daemon keeps beside a state file: `statePath` without its `.json`, then
    /// `suffix` (`state.json` → `state.tls`, `state.speech`, `state.web-sessions`…).
    public static func sibling(of statePath: String, _ suffix: String) -> String {
        (statePath.hasSuffix(".json") ? String(statePath.dropLast(5)) : statePath) + suffix
    }

    /// Where the state lives when `--state` is not given: `$STATE_DIRECTORY/state.json` under
    /// systemd, else `$XDG_STATE_HOME/jukeboxd/SESSION.json`, else
    /// `$HOME/.local/state/jukeboxd/SESSION.json`. Without any of them there is no private
    /// place for it (a shared folder such as /tmp would let another user plant files where
    /// the daemon writes), so the daemon refuses to guess.
    public static func defaultPath(sessionName: String, environment: [String: String]) throws(StateLocationError) -> String {
        try defaultPath(fileName: fileName(forSession: sessionName), environment: environment)
    }

    /// A session's name as a file name that needs no quoting in a shell: lower case, each run
    /// of anything but letters and digits one `-` (`Desk reminders` → `desk-reminders`);
    /// `session` for a name with neither.
    public static func fileName(forSession name: String) -> String {
        var slug = ""
        for character in name.lowercased() {
            if character.isLetter || character.isNumber {
                slug.append(character)
            } else if !slug.isEmpty, slug.last != "-" {
                slug.append("-")
            }
        }
        while slug.last == "-" { slug.removeLast() }
        return slug.isEmpty ? "session" : String(slug.prefix(100))
    }

    /// The state files beside the state file (`sibling`), each moved with it.
    public static let siblingSuffixes = [".tls", ".speech", ".web-sessions", ".loudness.json"]

    /// Earlier versions named the default state file after the session's name as it is, spaces
    /// and all (`Desk reminders.json`). When that file is there and `path` (its name now) is
    /// not, it is moved to `path` with what lies beside it (the web remote's authority in
    /// `.tls`, announcements, logins, loudness), unless a jukeboxd still runs with it. Returns
    /// the earlier path when it moved something.
    public static func moveFromEarlierName(to path: String, sessionName: String, environment: [String: String]) -> String? {
        guard serviceFolder(environment) == nil,
              let earlier = try? defaultPath(fileName: String(sessionName.map { $0 == "/" ? "_" : $0 }), environment: environment),
              earlier != path, FilePath.exists(earlier), !FilePath.exists(path)
        else { return nil }
        // Not from under a jukeboxd of the earlier version that is still running.
        guard let lock = try? StateLock(statePath: earlier) else { return nil }
        defer { withExtendedLifetime(lock) { _ = unlink(lock.path) } }
        guard rename(earlier, path) == 0 else { return nil }
        for suffix in siblingSuffixes where FilePath.exists(sibling(of: earlier, suffix)) && !FilePath.exists(sibling(of: path, suffix)) {
            _ = rename(sibling(of: earlier, suffix), sibling(of: path, suffix))
        }
        return earlier
    }

    static func defaultPath(fileName name: String, environment: [String: String]) throws(StateLocationError) -> String {
        if let folder = serviceFolder(environment) { return folder + "/state.json" }
        if let base = environment["XDG_STATE_HOME"], !base.isEmpty { return "\(base)/jukeboxd/\(name).json" }
        if let home = environment["HOME"], !home.isEmpty, home != "/" { return "\(home)/.local/state/jukeboxd/\(name).json" }
        throw StateLocationError(
            message: "no place for the state file: HOME, XDG_STATE_HOME and STATE_DIRECTORY are all unset; give one with --state PATH (in a folder of your own)", exitCode: 78)
    }

    static func moveAside(_ path: String, now: Double, reason: String) -> LoadResult {
        do {
            return .corrupt(movedTo: try FilePath.keepAside(path, epochSeconds: Int64(now)), reason: reason)
        } catch {
            return .unusable(reason: "\(reason); moving it to \(path).corrupt-\(Int64(now)) failed: \(error)")
        }
    }
}
