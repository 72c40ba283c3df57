/// Sample layouts the pipeline carries. Decoders pick the one closest to the file so that
/// unity gain passes samples through bit for bit.
public enum SampleFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case s16, s32, float32

    public var bytesPerSample: Int { self == .s16 ? 2 : 4 }
    public var description: String { rawValue }
}
