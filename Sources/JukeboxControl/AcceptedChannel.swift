import Glibc
import JukeboxCore
import NIOCore

/// A client connection as accepted, before its async wrapper exists.
struct AcceptedChannel: Sendable {
    let channel: any Channel
    let hold: NIOLoopBound<InboundBuffer>
    /// Tells the line decoder when an upload's raw bytes come.
    let raw: PendingUploadBytes

    init(channel: any Channel, hold: InboundBuffer, raw: PendingUploadBytes) {
        self.channel = channel
        self.raw = raw
        self.hold = NIOLoopBound(hold, eventLoop: channel.eventLoop)
    }

    /// Wraps the channel for async use and releases what the hold kept to the wrapper.
    func wrap() async throws -> NIOAsyncChannel<LineFrameDecoder.Frame, ByteBuffer> {
        try await channel.eventLoop.submit { [channel, hold] in
            let wrapped = try NIOAsyncChannel<LineFrameDecoder.Frame, ByteBuffer>(wrappingChannelSynchronously: channel)
            channel.pipeline.syncOperations.removeHandler(hold.value, promise: nil)
            return wrapped
        }.get()
    }

    /// Who is at the other end, by the user the kernel says runs it (`SO_PEERCRED`): what the
    /// entries it queues are shown as queued by, and what `stop --queued-by` takes.
    func userName() async -> String {
        guard let options = channel as? any SocketOptionProvider,
              let credentials: PeerCredentials = try? await options.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)).get()
        else { return "jukebox" }
        // The user database may be more than a file (LDAP, sssd): looked up off the cooperative pool.
        return await Self.users.run { UserName.name(of: credentials.uid) }
    }

    private static let users = BlockingWorkQueue(label: "jukebox.control.users")
}

/// `struct ucred`: pid, uid and gid, as the kernel fills it for `SO_PEERCRED` (Glibc hides
/// its own behind `_GNU_SOURCE`).
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
