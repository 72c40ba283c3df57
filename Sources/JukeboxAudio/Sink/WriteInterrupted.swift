/// A write ended early by `AudioSink.interrupt()`; the device took the first `framesWritten`.
public struct WriteInterrupted: Error, Sendable {
    public var framesWritten: Int
    public init(framesWritten: Int) { self.framesWritten = framesWritten }
}
