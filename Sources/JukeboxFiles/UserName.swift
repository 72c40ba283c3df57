#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A user's name and number for messages, `alice (1000)`, or `user 1000` for a number with no
/// name: what the daemon and the client say alike.
public enum UserName {
    public static func of(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "user \(uid)" }
        return "\(String(cString: name)) (\(uid))"
    }

    /// The user's name alone, `alice`, or `user 1000` for a number with no name. Safe from
    /// any thread (`getpwuid_r`).
    public static func name(of uid: uid_t) -> String {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 1024)
        // The entry's strings live in the buffer: read while it is held.
        return buffer.withUnsafeMutableBufferPointer { storage in
            guard let base = storage.baseAddress, getpwuid_r(uid, &entry, base, storage.count, &found) == 0, found != nil, let name = entry.pw_name else {
                return "user \(uid)"
            }
            return String(cString: name)
        }
    }
}
