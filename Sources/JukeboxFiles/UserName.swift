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
}
