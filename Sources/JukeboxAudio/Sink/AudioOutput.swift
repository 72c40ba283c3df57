/// What a session's output (and its `bed`) is built as: the sink clips play through and, when
/// the session has a bed, the mixer that sink is, seen as a bed (its switch, its state, its
/// start). The player is handed this, so it never has to guess what its output is.
public struct AudioOutput: Sendable {
    public let sink: any AudioSink
    public let bed: (any MusicBed)?

    /// An output without a bed: an ALSA device, a Snapcast pipe, a fake.
    public init(_ sink: any AudioSink) {
        self.sink = sink
        bed = nil
    }

    /// An output whose device the bed's mixer holds.
    public init(bed: some AudioSink & MusicBed) {
        sink = bed
        self.bed = bed
    }
}
