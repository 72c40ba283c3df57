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

    /// The number of the group named `name`, or nil when there is none. Safe from any thread
    /// (`getgrnam_r`).
    public static func groupID(_ name: String) -> gid_t? {
        var entry = group()
        var found: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        return buffer.withUnsafeMutableBufferPointer { storage in
            guard let base = storage.baseAddress, getgrnam_r(name, &entry, base, storage.count, &found) == 0, found != nil else { return nil }
            return entry.gr_gid
        }
    }

    /// Whether this process is in group `gid` (its own group, or a supplementary one).
    public static func isMember(of gid: gid_t) -> Bool {
        if getegid() == gid { return true }
        let count = getgroups(0, nil)
        guard count > 0 else { return false }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let got = getgroups(count, &groups)
        return got > 0 && groups.prefix(Int(got)).contains(gid)
    }
}
