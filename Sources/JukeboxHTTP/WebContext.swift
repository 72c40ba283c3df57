import Hummingbird
import Logging
import NIOCore

/// A request's context: Hummingbird's, plus the client's address (for login throttling).
public struct WebContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's address without its port; "local" for a Unix socket.
    public let clientAddress: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress ?? "local"
    }
}
