#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A user's name for messages, or their number when they have none.
public enum UserName {
    public static func of(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "#\(uid)" }
        return "\(String(cString: name)) (\(uid))"
    }
}
