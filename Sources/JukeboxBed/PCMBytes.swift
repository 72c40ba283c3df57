import JukeboxAudio

/// Raw little-endian PCM as players write it into a pipe, turned into float samples: 16-bit,
/// 24-bit in four bytes (the low three, as MPD's and Snapcast's `:24:` formats hold them),
/// or 32-bit.
enum PCMBytes {
    /// Samples of `bytes` (whole samples only; the caller keeps what is left of a frame).
    static func floats(_ bytes: UnsafeRawBufferPointer, bits: Int) -> [Float] {
        if bits == 16 {
            let count = bytes.count / 2
            var samples = [Float](repeating: 0, count: count)
            for index in 0..<count {
                let value = Int16(bitPattern: UInt16(bytes[2 * index]) | UInt16(bytes[2 * index + 1]) << 8)
                samples[index] = Float(value) / 32_768
            }
            return samples
        }
        let count = bytes.count / 4
        var samples = [Float](repeating: 0, count: count)
        for index in 0..<count {
            let raw = UInt32(bytes[4 * index]) | UInt32(bytes[4 * index + 1]) << 8 | UInt32(bytes[4 * index + 2]) << 16 | UInt32(bytes[4 * index + 3]) << 24
            if bits == 24 {
                // Sign-extended from bit 23; whatever the top byte holds is ignored.
                let value = Int32(bitPattern: raw << 8) >> 8
                samples[index] = Float(value) / 8_388_608
            } else {
                samples[index] = Float(Double(Int32(bitPattern: raw)) / 2_147_483_648)
            }
        }
        return samples
    }
}
