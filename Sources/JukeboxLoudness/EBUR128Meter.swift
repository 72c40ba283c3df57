import CEBUR128
import Glibc
import JukeboxAudio

/// EBU R 128 loudness by libebur128 (the only file that imports it): integrated loudness and
/// true peak, measured on a thread of its own while the clip is decoded block by block, so
/// a long clip costs one block of memory, never the whole file.
public struct EBUR128Meter: LoudnessMeter {
    /// Frames decoded at a time.
    static let blockFrames = 16384
    private let work = BlockingWorkQueue(label: "jukeboxd.loudness")

    public init() {}

    public func measure(_ source: ClipSource, decoder: any ClipDecoder) async throws -> Loudness {
        let decoded = try await decoder.open(source)
        let format = decoded.format
        let state = try await work.run { () throws -> MeterState in try MeterState(channels: format.channels, rate: format.sampleRate) }
        do {
            while let block = try await decoded.read(maxFrames: Self.blockFrames) {
                try await work.run { try state.add(block) }
            }
        } catch {
            await decoded.close()
            throw error
        }
        await decoded.close()
        return try await work.run { try state.result() }
    }
}

/// One measurement's libebur128 state. Used from the meter's thread only.
final class MeterState: @unchecked Sendable {
    private var state: UnsafeMutablePointer<ebur128_state>?
    let channels: Int

    init(channels: Int, rate: Int) throws {
        self.channels = channels
        state = ebur128_init(UInt32(channels), UInt(rate), Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue))
        guard state != nil else { throw LoudnessError.cannotMeasure("libebur128 cannot measure \(channels) channels at \(rate) Hz") }
        // A mono clip is played on every channel of the device (two, on a Pi): it is
        // measured as heard, as dual mono (counted twice, 3 LU louder than one channel).
        // Five channels and more: the usual film layout (L, R, C, LFE, Ls, Rs); the others
        // are each weighted alike, as a stereo clip's are.
        if channels == 1 {
            ebur128_set_channel(state, 0, Int32(EBUR128_DUAL_MONO.rawValue))
        } else if channels >= 6 {
            let layout: [UInt32] = [EBUR128_LEFT.rawValue, EBUR128_RIGHT.rawValue, EBUR128_CENTER.rawValue, EBUR128_UNUSED.rawValue, EBUR128_LEFT_SURROUND.rawValue, EBUR128_RIGHT_SURROUND.rawValue]
            for (index, channel) in layout.enumerated() { ebur128_set_channel(state, UInt32(index), Int32(channel)) }
        }
    }

    deinit { ebur128_destroy(&state) }

    func add(_ block: AudioBuffer) throws {
        let frames = block.frames
        guard frames > 0 else { return }
        let status: Int32 = switch block.samples {
        case .s16(let samples): samples.withUnsafeBufferPointer { ebur128_add_frames_short(state, $0.baseAddress, frames) }
        case .s32(let samples): samples.withUnsafeBufferPointer { ebur128_add_frames_int(state, $0.baseAddress, frames) }
        case .float32(let samples): samples.withUnsafeBufferPointer { ebur128_add_frames_float(state, $0.baseAddress, frames) }
        }
        guard status == EBUR128_SUCCESS.rawValue else { throw LoudnessError.cannotMeasure("libebur128 refused a block (error \(status))") }
    }

    func result() throws -> Loudness {
        var integrated = 0.0
        guard ebur128_loudness_global(state, &integrated) == EBUR128_SUCCESS.rawValue else {
            throw LoudnessError.cannotMeasure("libebur128 gave no integrated loudness")
        }
        var peak = 0.0
        for channel in 0..<channels {
            var value = 0.0
            if ebur128_true_peak(state, UInt32(channel), &value) == EBUR128_SUCCESS.rawValue { peak = max(peak, value) }
        }
        let truePeak = peak > 0 ? 20 * Glibc.log10(peak) : Loudness.noPeak
        return Loudness(integrated: integrated, truePeak: truePeak)
    }
}

public enum LoudnessError: Error, Sendable, CustomStringConvertible {
    case cannotMeasure(String)
    public var description: String {
        switch self {
        case .cannotMeasure(let why): "cannot measure its loudness: \(why)"
        }
    }
}
