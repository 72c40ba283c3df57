import Dispatch
import Glibc
import JukeboxDuckTarget
import JukeboxFiles
import Synchronization

/// The one connection jukeboxd keeps to an MPD it lowers, reused by every conversation: the
/// levels read, each ramp, the claims. Between conversations it waits in MPD's `idle` (for
/// messages, which no one sends it), where MPD keeps a connection open without a time limit,
/// so a clip costs no connection at all; a conversation ends the wait (`noidle`) and starts it
/// again after. Its blocking calls run on a queue of its own, never on the cooperative pool.
///
/// A claim (`DuckClaims`) is a channel this connection is subscribed to, dropped by
/// unsubscribing: MPD lists it while the connection holds it and forgets it if the connection
/// goes (the daemon stopped or killed). A connection that broke is made again at the next
/// conversation, which subscribes the claims held again first.
///
/// Bounds, as for any player: a connection within a second, every answer within a second of
/// the request, a line at most `maxLine` bytes, an answer at most `maxAnswer`. A link unused
/// for `closeAfter` with no claim closes its connection.
final class MPDLink: @unchecked Sendable {
    // @unchecked: `connection` and `claims` are used on `queue` only; `shared` is a Mutex.
    struct Key: Hashable, Sendable {
        var address: PlayerAddress
        var passwordFile: String?
    }

    /// The same bounds as every player's conversation (`LineExchange`).
    static let timeout = LineExchange.timeout
    static let maxLine = LineExchange.maxLine
    static let maxAnswer = LineExchange.maxAnswer
    static let maxLines = 200
    static let closeAfter: Duration = .seconds(600)

    private static let links = Mutex<[Key: MPDLink]>([:])

    /// The link to `key`'s MPD, made the first time it is asked for.
    static func link(_ key: Key) -> MPDLink {
        links.withLock { links in
            if let link = links[key] { return link }
            let link = MPDLink(key)
            links[key] = link
            return link
        }
    }

    let key: Key
    private let queue: DispatchQueue
    private var connection: Connection?
    /// The channels this link is subscribed to, to subscribe again on a new connection.
    private var claims: Set<String> = []
    /// Connections made so far: a wait to close one belongs to the one it was set for.
    private var made = 0
    private struct Shared {
        /// Conversations held open (`hold`): no `idle` between their exchanges.
        var holds = 0
        var lastUsed = ContinuousClock.now
        /// Each claim's holder, waiting until it is let go; and those let go before their
        /// holder began to wait.
        var holders: [String: CheckedContinuation<Void, Never>] = [:]
        var letGo: Set<String> = []
    }
    private let shared = Mutex(Shared())

    private init(_ key: Key) {
        self.key = key
        queue = DispatchQueue(label: "jukebox.duck.mpd")
    }

    // MARK: - Conversations

    /// Runs `work` on the link's queue with the connection out of `idle`, connecting first if
    /// need be; a connection that broke since the last conversation is made again once.
    func exchange<T: Sendable>(_ work: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            queue.async {
                continuation.resume(with: Result { try self.onQueue(work) })
            }
        }
    }

    /// Keeps the connection out of `idle` until `body` ends, so that its exchanges (a ramp's
    /// steps) follow each other without one; given up on after `length` and a second.
    func hold<T: Sendable>(for length: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        shared.withLock { $0.holds += 1 }
        defer {
            shared.withLock { $0.holds -= 1 }
            queue.async { self.idleIfFree() }
        }
        return try await LineExchange.within(length + Self.timeout, body)
    }

    private func onQueue<T>(_ work: (Connection) throws -> T) throws -> T {
        shared.withLock { $0.lastUsed = .now }
        defer { idleIfFree() }
        if let connection {
            // A connection that broke while it waited shows it here: made again, once.
            if (try? connection.endIdle()) != nil {
                do {
                    return try work(connection)
                } catch {
                    drop()
                    throw error
                }
            }
            drop()
        }
        let fresh = try connect()
        do {
            return try work(fresh)
        } catch {
            drop()
            throw error
        }
    }

    private func connect() throws -> Connection {
        let password: String? = try key.passwordFile.map(Self.password)
        let fresh = try Connection(key.address)
        do {
            let greeting = try fresh.line()
            guard greeting.hasPrefix("OK MPD ") else { throw PlayerProblem("is not MPD (it greeted with \"\(greeting.prefix(40))\")") }
            if let password { _ = try fresh.exchange("password \"\(Self.quoted(password))\"") }
            for channel in claims.sorted() { _ = try fresh.exchange("subscribe \(channel)") }
        } catch {
            fresh.close()
            throw error
        }
        connection = fresh
        made += 1
        scheduleClose(made)
        return fresh
    }

    /// Back to `idle` once no conversation holds the connection.
    private func idleIfFree() {
        guard let connection, !connection.idling, shared.withLock({ $0.holds == 0 }) else { return }
        if (try? connection.startIdle()) == nil { drop() }
    }

    /// Closes a broken connection. Its claims are gone from MPD with it; they are subscribed
    /// again on the next connection.
    private func drop() {
        connection?.close()
        connection = nil
    }

    private func scheduleClose(_ connection: Int) {
        queue.asyncAfter(deadline: .now() + .seconds(Int(Self.closeAfter.components.seconds))) { [weak self] in
            guard let self, self.connection != nil, self.made == connection else { return }
            let unused = self.shared.withLock { $0.holds == 0 && ContinuousClock.now - $0.lastUsed >= Self.closeAfter }
            if unused, self.claims.isEmpty { self.drop() } else { self.scheduleClose(connection) }
        }
    }

    // MARK: - Claims

    /// Subscribes to `channel`, and waits until `letGo(channel)` (or the task is cancelled,
    /// which lets go too).
    func holdClaim(_ channel: String, taken: @Sendable () -> Void) async throws {
        shared.withLock { _ = $0.letGo.remove(channel) }
        try await exchange { connection in
            self.claims.insert(channel)
            do {
                _ = try connection.exchange("subscribe \(channel)")
            } catch {
                self.claims.remove(channel)
                throw error
            }
        }
        taken()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiting: CheckedContinuation<Void, Never>) in
                let now = shared.withLock { shared -> Bool in
                    guard !Task.isCancelled, shared.letGo.remove(channel) == nil else { return true }
                    shared.holders[channel] = waiting
                    return false
                }
                if now { waiting.resume() }
            }
        } onCancel: {
            Task { try? await self.letGo(channel) }
        }
    }

    /// Unsubscribes from `channel` (MPD forgets a channel no one is subscribed to), and ends
    /// its holder's wait.
    func letGo(_ channel: String) async throws {
        defer {
            // A holder not yet waiting finds it let go when it comes to wait.
            shared.withLock { shared -> CheckedContinuation<Void, Never>? in
                guard let holder = shared.holders.removeValue(forKey: channel) else {
                    shared.letGo.insert(channel)
                    return nil
                }
                return holder
            }?.resume()
        }
        try await exchange { connection in
            guard self.claims.remove(channel) != nil else { return }
            // A connection made again for this has not subscribed it: MPD refuses, and the
            // claim is gone all the same.
            _ = try? connection.exchange("unsubscribe \(channel)")
        }
    }

    // MARK: - Text

    static func milliseconds(_ duration: Duration) -> Int32 {
        Int32(clamping: duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    static func quoted(_ text: String) -> String {
        text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
    }

    private static func password(_ path: String) throws -> String {
        do {
            let bytes = try FilePath.read(path, limit: 1024)
            let text = String(decoding: bytes, as: UTF8.self)
            return String(text.prefix { $0 != "\n" && $0 != "\r" })
        } catch {
            throw PlayerProblem("its password file \(path) could not be read (\(error))")
        }
    }
}

extension MPDLink {
    /// A socket to MPD and what has been read from it, used on the link's queue only.
    final class Connection: @unchecked Sendable {
        private var descriptor: Int32
        private var pending: [UInt8] = []
        /// Waiting in `idle`: the next exchange sends `noidle` first.
        private(set) var idling = false
        /// Bytes read for the answer now being read.
        private var read = 0

        init(_ address: PlayerAddress) throws {
            descriptor = try Self.connect(address)
        }

        deinit { close() }

        func close() {
            if descriptor >= 0 { Glibc.close(descriptor) }
            descriptor = -1
        }

        /// Sends `command` and returns its answer's lines, up to MPD's "OK".
        func exchange(_ command: String) throws -> [String] {
            try send(command)
            return try answer(to: String(command.prefix { $0 != " " }))
        }

        /// Sends several commands as one list, and returns the first one's answer.
        func list(_ commands: [String]) throws -> [String] {
            try send((["command_list_begin"] + commands + ["command_list_end"]).joined(separator: "\n"))
            return try answer(to: String(commands.first?.prefix { $0 != " " } ?? ""))
        }

        func startIdle() throws {
            try send("idle message")
            idling = true
        }

        /// Ends the wait in `idle`: MPD answers with what changed (nothing asked for here)
        /// and "OK".
        func endIdle() throws {
            guard idling else { return }
            idling = false
            try send("noidle")
            _ = try answer(to: "idle")
        }

        func answer(to command: String) throws -> [String] {
            read = 0
            var lines: [String] = []
            while true {
                let text = try line()
                if text == "OK" { return lines }
                if text.hasPrefix("ACK ") {
                    let message = text.split(separator: "}", maxSplits: 1).last.map { $0.trimmingPrefix(" ") } ?? ""
                    throw PlayerProblem("refused \(command): \(message.prefix(200))")
                }
                guard lines.count < MPDLink.maxLines else { throw PlayerProblem("answered \(command) with more than \(MPDLink.maxLines) lines") }
                lines.append(text)
            }
        }

        private func send(_ text: String) throws {
            let bytes = Array((text + "\n").utf8)
            var sent = 0
            let deadline = ContinuousClock.now + MPDLink.timeout
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if count > 0 {
                    sent += count
                } else if count < 0, errno == EAGAIN || errno == EINTR {
                    try wait(for: Int16(POLLOUT), until: deadline)
                } else {
                    throw PlayerProblem("closed the connection")
                }
            }
        }

        /// The next line, without its line break, within a second.
        func line() throws -> String {
            let deadline = ContinuousClock.now + MPDLink.timeout
            while true {
                if let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    var line = Array(pending[..<end])
                    pending.removeFirst(end + 1)
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    return String(decoding: line, as: UTF8.self)
                }
                guard pending.count <= MPDLink.maxLine else { throw PlayerProblem("sent a line longer than \(MPDLink.maxLine) bytes") }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = buffer.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    read += count
                    guard read <= MPDLink.maxAnswer else { throw PlayerProblem("sent more than \(MPDLink.maxAnswer) bytes") }
                    pending += buffer[..<count]
                } else if count < 0, errno == EAGAIN || errno == EINTR {
                    try wait(for: Int16(POLLIN), until: deadline)
                } else {
                    throw PlayerProblem("closed the connection")
                }
            }
        }

        private func wait(for events: Int16, until deadline: ContinuousClock.Instant) throws {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw PlayerProblem("did not answer within \(LineExchange.words(MPDLink.timeout))") }
            var waiting = pollfd(fd: descriptor, events: events, revents: 0)
            _ = poll(&waiting, 1, max(MPDLink.milliseconds(left), 1))
        }

        /// A non-blocking socket connected to `address` within a second.
        private static func connect(_ address: PlayerAddress) throws -> Int32 {
            switch address {
            case .unix(let path):
                var socketAddress = sockaddr_un()
                socketAddress.sun_family = sa_family_t(AF_UNIX)
                let bytes = Array(path.utf8)
                guard bytes.count < MemoryLayout.size(ofValue: socketAddress.sun_path) else { throw PlayerProblem("its socket path is too long") }
                withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: bytes) }
                return try withUnsafeBytes(of: &socketAddress) { raw in
                    try connect(family: AF_UNIX, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            case .tcp(let host, let port):
                var hints = addrinfo()
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                hints.ai_flags = AI_ADDRCONFIG
                var found: UnsafeMutablePointer<addrinfo>?
                guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
                    throw PlayerProblem("its host name could not be looked up")
                }
                defer { freeaddrinfo(first) }
                var problem = PlayerProblem("could not be connected to")
                var next: UnsafeMutablePointer<addrinfo>? = first
                while let info = next {
                    do {
                        let descriptor = try connect(family: info.pointee.ai_family, info.pointee.ai_addr, info.pointee.ai_addrlen)
                        // Each command goes at once: `noidle` follows an `idle` that MPD has
                        // not answered, and would otherwise wait for its acknowledgement.
                        var on: Int32 = 1
                        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                        return descriptor
                    } catch let failed as PlayerProblem {
                        problem = failed
                    }
                    next = info.pointee.ai_next
                }
                throw problem
            }
        }

        private static func connect(family: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) throws -> Int32 {
            let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw PlayerProblem("could not be connected to") }
            if Glibc.connect(descriptor, address, length) != 0 {
                var code = errno
                if code == EINPROGRESS {
                    var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    if poll(&waiting, 1, MPDLink.milliseconds(MPDLink.timeout)) == 1 {
                        var length = socklen_t(MemoryLayout<Int32>.size)
                        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
                    } else {
                        code = ETIMEDOUT
                    }
                }
                if code != 0 {
                    Glibc.close(descriptor)
                    throw switch code {
                    case ECONNREFUSED: PlayerProblem("refused the connection: is it running?")
                    case ENOENT: PlayerProblem("its socket is not there: is it running?")
                    case EACCES: PlayerProblem("its socket may not be opened by this user")
                    case ETIMEDOUT: PlayerProblem("could not be connected to within a second")
                    default: PlayerProblem("could not be connected to")
                    }
                }
            }
            return descriptor
        }
    }
}
