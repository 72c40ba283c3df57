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

    public init(path: String) { self.path = path }

    public enum LoadResult: Sendable, Equatable {
        case missing
        case loaded(PersistedState)
        /// The file could not be used; it was moved to `movedTo` and the daemon starts empty.
        case corrupt(movedTo: String, reason: String)
    }

    public func load(now: Double = SystemWallClock.now()) async -> LoadResult {
        await queue.run { [path] in
            let bytes: [UInt8]
            do {
                bytes = try FilePath.read(path, limit: FileReadError.stateLimit)
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

    public func save(_ state: PersistedState) async throws {
        try await queue.run { [path] in try Self.writeAtomically(state, to: path) }
    }

    static func writeAtomically(_ state: PersistedState, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes = Array(try encoder.encode(state))
        let folder = FilePath.directory(of: path)
        try makeFolders(folder)
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else { throw StateFileError(path: temporary, errno: errno) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let error = errno
                close(descriptor)
                throw StateFileError(path: temporary, errno: error)
            }
            offset += written
        }
        guard fsync(descriptor) == 0 else {
            let error = errno
            close(descriptor)
            throw StateFileError(path: temporary, errno: error)
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else { throw StateFileError(path: path, errno: errno) }
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    static func makeFolders(_ folder: String) throws {
        var current = ""
        for part in folder.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o755) != 0, errno != EEXIST { throw StateFileError(path: current, errno: errno) }
        }
    }

    static func moveAside(_ path: String, now: Double, reason: String) -> LoadResult {
        let target = "\(path).corrupt-\(Int64(now))"
        rename(path, target)
        return .corrupt(movedTo: target, reason: reason)
    }
}

/// The state could not be written.
public struct StateFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var errno: Int32
    public var description: String { "cannot write the state file \(path): \(FileReadError(errno: errno)) (errno \(errno))" }
}
