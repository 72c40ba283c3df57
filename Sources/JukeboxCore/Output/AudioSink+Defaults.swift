extension AudioSink {
    public func interrupt() {}
    public func heartbeat() async {}
    public func underrunCount() async -> Int { 0 }
    public func rewind(upTo maxFrames: Int, keeping: Int) async -> Int { 0 }
}
