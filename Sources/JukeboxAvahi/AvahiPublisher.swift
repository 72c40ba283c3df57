import CAvahi
import Glibc
import Synchronization

/// A DNS-SD service to announce on the local network (mDNS).
public struct DNSService: Sendable, Equatable {
    /// The instance name, as browsers show it: at most 63 bytes of UTF-8.
    public var name: String
    /// The service type, such as `_esphomelib._tcp`.
    public var type: String
    public var port: UInt16
    /// The TXT record, in this order; each `key=value` at most 255 bytes.
    public var txt: [TXTEntry]
    /// The network interface to announce on, by index; nil for all of them.
    public var interfaceIndex: Int32?
    /// Only IPv4 or only IPv6 records; nil for both.
    public var family: AddressFamily?

    public struct TXTEntry: Sendable, Equatable {
        public var key: String
        public var value: String
        public init(_ key: String, _ value: String) {
            self.key = key
            self.value = value
        }
    }

    public enum AddressFamily: Sendable, Equatable { case ipv4, ipv6 }

    public init(name: String, type: String, port: UInt16, txt: [TXTEntry], interfaceIndex: Int32? = nil, family: AddressFamily? = nil) {
        self.name = name
        self.type = type
        self.port = port
        self.txt = txt
        self.interfaceIndex = interfaceIndex
        self.family = family
    }

    /// The longest instance name DNS allows (one label).
    public static let maxNameBytes = 63
    /// The longest `key=value` of a TXT record (one length byte).
    public static let maxTXTEntryBytes = 255

    /// What cannot be announced, in words; nil when all of it can.
    public var problem: String? {
        if name.isEmpty || name.utf8.count > Self.maxNameBytes { return "the name \"\(name)\" is not 1 to \(Self.maxNameBytes) bytes long" }
        if let entry = txt.first(where: { $0.key.isEmpty || $0.key.contains("=") || $0.key.utf8.count + 1 + $0.value.utf8.count > Self.maxTXTEntryBytes }) {
            return "the TXT entry \"\(entry.key)\" is empty, holds \"=\" in its key, or is over \(Self.maxTXTEntryBytes) bytes"
        }
        return nil
    }
}

/// What happens to an announcement, for the log.
public enum PublicationEvent: Sendable, Equatable {
    /// The service is on the network under this name.
    case published(name: String)
    /// avahi-daemon is not running (or has stopped): the service is announced once it runs.
    case waitingForDaemon
    /// Another service on the network has the name; the service is announced under the new one.
    case renamed(from: String, to: String)
    /// The system's D-Bus cannot be reached, so avahi-daemon cannot be asked; tried again later.
    case noMessageBus
    /// avahi-daemon refused the service, in words; tried again later.
    case failed(String)
}

/// Announces one service through avahi-daemon, for as long as it runs: avahi's threaded poll
/// is its own thread, on which every avahi call and callback happens. An avahi-daemon that
/// starts later, restarts or goes away is followed; a name taken by another device is
/// changed as avahi proposes ("name #2"); a D-Bus that cannot be reached is tried again.
public final class AvahiPublisher: Sendable {
    public let service: DNSService
    private let retry: Duration
    private let events: @Sendable (PublicationEvent) -> Void
    private let state = Mutex(State())

    /// Touched on avahi's thread only, or once it has ended.
    private struct State: ~Copyable {
        var poll: Handle?
        var client: Handle?
        var group: Handle?
        var name: String = ""
        var lastEvent: PublicationEvent?
        var stopped = false
        /// A connection attempt is scheduled: never two, whichever failure asks for one.
        var connectPending = false
    }

    public init(service: DNSService, retry: Duration = .seconds(60), events: @escaping @Sendable (PublicationEvent) -> Void) {
        self.service = service
        self.retry = retry
        self.events = events
    }

    /// Starts avahi's thread, which connects and announces; returns at once. False when the
    /// service cannot be announced (the event says why) or the thread cannot start.
    @discardableResult
    public func start() -> Bool {
        if let problem = service.problem {
            events(.failed(problem))
            return false
        }
        guard let poll = avahi_threaded_poll_new() else {
            events(.failed("no memory for avahi's event loop"))
            return false
        }
        state.withLock { state in
            state.poll = Handle(poll)
            state.name = service.name
        }
        // The thread holds the publisher until `stop` has ended it.
        let context = Unmanaged.passRetained(self).toOpaque()
        scheduleConnect(after: .zero, on: poll)
        guard avahi_threaded_poll_start(poll) == 0 else {
            Unmanaged<AvahiPublisher>.fromOpaque(context).release()
            avahi_threaded_poll_free(poll)
            state.withLock { $0.poll = nil }
            events(.failed("avahi's event loop cannot start a thread"))
            return false
        }
        return true
    }

    /// Withdraws the service and ends avahi's thread. Blocks until it has ended: call it from
    /// a thread of its own, never from the cooperative pool.
    public func stop() {
        let poll = state.withLock { state -> OpaquePointer? in
            state.stopped = true
            return state.poll?.pointer
        }
        guard let poll else { return }
        avahi_threaded_poll_stop(poll)
        // Freeing the client closes its D-Bus connection, and avahi-daemon withdraws the
        // service with a goodbye on the network.
        let client = state.withLock { state -> OpaquePointer? in
            defer {
                state.client = nil
                state.group = nil
                state.poll = nil
            }
            return state.client?.pointer
        }
        if let client { avahi_client_free(client) }
        avahi_threaded_poll_free(poll)
        Unmanaged.passUnretained(self).release()
    }

    // MARK: On avahi's thread

    fileprivate func connect(_ timeout: OpaquePointer?) {
        let (poll, stopped) = state.withLock { state in
            state.connectPending = false
            return (state.poll?.pointer, state.stopped)
        }
        guard let poll else { return }
        // A timeout that has fired is freed in its callback (avahi allows it), so retries over
        // months hold nothing.
        if let timeout, let api = avahi_threaded_poll_get(poll) { api.pointee.timeout_free(timeout) }
        guard !stopped else { return }
        if let old = state.withLock({ state -> OpaquePointer? in
            defer {
                state.client = nil
                state.group = nil
            }
            return state.client?.pointer
        }) {
            avahi_client_free(old)
        }
        var error: Int32 = 0
        let context = Unmanaged.passUnretained(self).toOpaque()
        // NO_FAIL: without an avahi-daemon the client waits for one (CONNECTING) rather than
        // failing; only a D-Bus that cannot be reached at all fails here.
        let client = avahi_client_new(avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, clientCallback, context, &error)
        guard let client else {
            report(error == Int32(AVAHI_ERR_NO_DAEMON) || error == Int32(AVAHI_ERR_DBUS_ERROR) ? .noMessageBus : .failed(Self.words(error)))
            scheduleConnect(after: retry, on: poll)
            return
        }
        state.withLock { $0.client = Handle(client) }
    }

    fileprivate func clientChanged(_ client: OpaquePointer, to clientState: AvahiClientState) {
        switch clientState {
        case AVAHI_CLIENT_S_RUNNING:
            announce(client)
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The host name is being (re)registered: the service follows once it is.
            if let group = state.withLock({ $0.group?.pointer }) { avahi_entry_group_reset(group) }
        case AVAHI_CLIENT_CONNECTING:
            report(.waitingForDaemon)
        case AVAHI_CLIENT_FAILURE:
            let error = avahi_client_errno(client)
            report(error == Int32(AVAHI_ERR_DISCONNECTED) ? .waitingForDaemon : .failed(Self.words(error)))
            // A new client, from the event loop rather than inside this one's callback.
            if let poll = state.withLock({ $0.poll?.pointer }) {
                scheduleConnect(after: error == Int32(AVAHI_ERR_DISCONNECTED) ? .zero : retry, on: poll)
            }
        default:
            break
        }
    }

    fileprivate func groupChanged(_ group: OpaquePointer, to groupState: AvahiEntryGroupState) {
        state.withLock { $0.group = Handle(group) }
        switch groupState {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            report(.published(name: state.withLock { $0.name }))
        case AVAHI_ENTRY_GROUP_COLLISION:
            rename()
            avahi_entry_group_reset(group)
            if let client = avahi_entry_group_get_client(group) { announce(client) }
        case AVAHI_ENTRY_GROUP_FAILURE:
            let error = avahi_client_errno(avahi_entry_group_get_client(group))
            report(.failed(Self.words(error)))
        default:
            break
        }
    }

    private func announce(_ client: OpaquePointer) {
        var group = state.withLock { $0.group?.pointer }
        if group == nil {
            group = avahi_entry_group_new(client, groupCallback, Unmanaged.passUnretained(self).toOpaque())
            guard let made = group else {
                report(.failed(Self.words(avahi_client_errno(client))))
                return
            }
            state.withLock { $0.group = Handle(made) }
        }
        guard let group, avahi_entry_group_is_empty(group) > 0 else { return }
        // A name taken by another service of this avahi-daemon is changed at once.
        for _ in 0..<16 {
            let result = add(to: group)
            if result == Int32(AVAHI_ERR_COLLISION) {
                rename()
                avahi_entry_group_reset(group)
                continue
            }
            if result < 0 {
                report(.failed(Self.words(result)))
                return
            }
            let committed = avahi_entry_group_commit(group)
            if committed < 0 { report(.failed(Self.words(committed))) }
            return
        }
        report(.failed("every name tried is taken"))
    }

    private func add(to group: OpaquePointer) -> Int32 {
        var list: UnsafeMutablePointer<AvahiStringList>?
        // avahi_string_list_add_pair prepends; added last to first, the record keeps the order.
        for entry in service.txt.reversed() {
            list = avahi_string_list_add_pair(list, entry.key, entry.value)
        }
        defer { avahi_string_list_free(list) }
        let interface = service.interfaceIndex ?? Int32(AVAHI_IF_UNSPEC)
        let proto: AvahiProtocol = switch service.family {
        case .ipv4?: Int32(AVAHI_PROTO_INET)
        case .ipv6?: Int32(AVAHI_PROTO_INET6)
        case nil: Int32(AVAHI_PROTO_UNSPEC)
        }
        let name = state.withLock { $0.name }
        return avahi_entry_group_add_service_strlst(group, interface, proto, AvahiPublishFlags(0), name, service.type, nil, nil, service.port, list)
    }

    private func rename() {
        let (old, new) = state.withLock { state -> (String, String) in
            let old = state.name
            guard let next = avahi_alternative_service_name(old) else { return (old, old) }
            defer { avahi_free(next) }
            state.name = String(cString: next)
            return (old, state.name)
        }
        if old != new { report(.renamed(from: old, to: new)) }
    }

    /// Tells of a change once: a daemon that stays away is not reported at every retry.
    private func report(_ event: PublicationEvent) {
        let isNew = state.withLock { state -> Bool in
            guard state.lastEvent != event else { return false }
            state.lastEvent = event
            return true
        }
        if isNew { events(event) }
    }

    /// A connection attempt after `delay`, on avahi's thread (a timeout of its event loop);
    /// nothing when one is already scheduled.
    private func scheduleConnect(after delay: Duration, on poll: OpaquePointer) {
        guard let api = avahi_threaded_poll_get(poll),
              state.withLock({ state in
                  defer { state.connectPending = true }
                  return !state.connectPending
              })
        else { return }
        var when = timeval()
        let milliseconds = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
        avahi_elapse_time(&when, UInt32(clamping: milliseconds), 0)
        _ = api.pointee.timeout_new(api, &when, connectCallback, Unmanaged.passUnretained(self).toOpaque())
    }

    /// avahi's error in words a user can act on.
    static func words(_ error: Int32) -> String {
        switch error {
        case Int32(AVAHI_ERR_ACCESS_DENIED), Int32(AVAHI_ERR_NOT_PERMITTED):
            "avahi-daemon does not let this user announce services (its D-Bus policy)"
        case Int32(AVAHI_ERR_TOO_MANY_CLIENTS), Int32(AVAHI_ERR_TOO_MANY_OBJECTS), Int32(AVAHI_ERR_TOO_MANY_ENTRIES):
            "avahi-daemon announces too much already (its limits in avahi-daemon.conf)"
        case Int32(AVAHI_ERR_INVALID_SERVICE_NAME):
            "avahi-daemon refused the name"
        default:
            "avahi-daemon said: \(String(cString: avahi_strerror(error))) (error \(error))"
        }
    }
}

/// An avahi object: used on avahi's thread only, or once that thread has ended.
private struct Handle: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

// avahi's callbacks: C functions, given the publisher as their context.

private let connectCallback: AvahiTimeoutCallback = { timeout, context in
    guard let context else { return }
    Unmanaged<AvahiPublisher>.fromOpaque(context).takeUnretainedValue().connect(timeout)
}

private let clientCallback: AvahiClientCallback = { client, clientState, context in
    guard let client, let context else { return }
    Unmanaged<AvahiPublisher>.fromOpaque(context).takeUnretainedValue().clientChanged(client, to: clientState)
}

private let groupCallback: AvahiEntryGroupCallback = { group, groupState, context in
    guard let group, let context else { return }
    Unmanaged<AvahiPublisher>.fromOpaque(context).takeUnretainedValue().groupChanged(group, to: groupState)
}
