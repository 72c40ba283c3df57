/// Interleaved samples in one of the pipeline's formats.
public enum AudioSamples: Sendable, Equatable {
    case s16([Int16])
    case s32([Int32])
    case float32([Float])

    public var format: SampleFormat {
        switch self {
        case .s16: .s16
        case .s32: .s32
        case .float32: .float32
        }
    }

    public var count: Int {
        switch self {
        case .s16(let samples): samples.count
        case .s32(let samples): samples.count
        case .float32(let samples): samples.count
        }
    }
}
