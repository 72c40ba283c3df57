#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's open descriptors, shared by every front end: each caps its connections so
/// that `reserve` always stay free.
public enum DescriptorLimit {
    /// Descriptors the front ends leave free, whatever clients do: for clips, the device,
    /// the state file, hooks and the journal.
    public static let reserve = 64

    /// The process's soft limit on open descriptors.
    public static var openFiles: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return Int(clamping: limit.rlim_cur)
    }
}
