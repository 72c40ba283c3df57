/// Seeded mutations of a valid byte stream, for decoders that must read or refuse anything:
/// 1 to 4 changes, each a byte overwritten, a byte removed, or `insertion(random)` inserted.
public enum Mutations {
    public static func mutate<R: RandomNumberGenerator>(
        _ bytes: [UInt8], using random: inout R, insertion: (inout R) -> [UInt8] = { [UInt8(truncatingIfNeeded: $0.next())] }
    ) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<Int(random.next() % 4 + 1) where !bytes.isEmpty {
            let at = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 3 {
            case 0: bytes[at] = UInt8(truncatingIfNeeded: random.next())
            case 1: bytes.remove(at: at)
            default: bytes.insert(contentsOf: insertion(&random), at: at)
            }
        }
        return bytes
    }
}
