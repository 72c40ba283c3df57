import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fake MQTT broker on a loopback port, serving on a thread of its own from the moment it
/// is made: it accepts each connection, reads its CONNECT, and at once sends the next of
/// `answers`, then reads until the client closes.
///
/// Answering on its own thread keeps each answer prompt however busy the test process is. A
/// client waits only 10 s for CONNACK; a broker that answered from a test task could miss
/// that while the machine runs every other test, and then answer a connection the client
/// had already given up.
public final class ScriptedBroker: Sendable {
    public let port: Int
    /// The first byte of each connection's first packet, as each is answered; it ends when
    /// every answer has been sent and its connection closed, or no client came for 60 s.
    public let served: AsyncStream<UInt8?>

    public init(answers: [[UInt8]]) {
        let (listener, port) = Loopback.bound(listening: true)
        self.port = port
        let (served, report) = AsyncStream.makeStream(of: UInt8?.self)
        self.served = served
        let thread = Thread {
            for answer in answers {
                guard let peer = Self.accept(listener, seconds: 60) else { break }
                var first = [UInt8](repeating: 0, count: 512)
                let count = read(peer, &first, first.count)
                _ = answer.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
                // The client closes once it has read the answer; 30 s bounds a client that does not.
                Self.readToEnd(peer, seconds: 30)
                close(peer)
                report.yield(count > 0 ? first[0] : nil)
            }
            close(listener)
            report.finish()
        }
        thread.start()
    }

    private static func accept(_ listener: Int32, seconds: Int) -> Int32? {
        var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&waiting, 1, Int32(seconds * 1000)) == 1 else { return nil }
        let peer = Glibc.accept(listener, nil, nil)
        return peer >= 0 ? peer : nil
    }

    private static func readToEnd(_ descriptor: Int32, seconds: Int) {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var bytes = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 1000) >= 0 else { return }
            if waiting.revents != 0, read(descriptor, &bytes, bytes.count) <= 0 { return }
        }
    }
}
