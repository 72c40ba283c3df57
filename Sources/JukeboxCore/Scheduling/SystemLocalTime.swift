#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The system's local time: `localtime_r` under the process's `TZ`, so DST changes are
/// applied by the C library's zone rules rather than by arithmetic of our own.
///
/// The C library reads the system's zone (`/etc/localtime`) once, and `localtime_r` never
/// looks again. `tzset` does look again, and reads the file anew if it changed, so it is
/// called every `zoneCheckInterval`: a zone changed with `timedatectl set-timezone` is
/// followed within seconds, without a restart. (With `TZ` set, the zone is what `TZ` says for
/// the life of the process.)
public struct SystemLocalTime: LocalZone {
    /// How often the system's zone is looked at again, at most.
    static let zoneCheckInterval: Int64 = 5_000_000_000
    /// When it was last looked at, in nanoseconds of the monotonic clock.
    private static let lastZoneCheck = Atomic<Int64>(0)

    /// Calls `tzset` if the zone was last looked at `zoneCheckInterval` ago or more.
    static func followZoneChanges() {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &spec)
        let now = Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
        let last = lastZoneCheck.load(ordering: .relaxed)
        guard now - last >= zoneCheckInterval, lastZoneCheck.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged else { return }
        tzset()
    }

    public init() {}

    public func utcOffset(at epochSeconds: Int64) -> Int {
        Self.followZoneChanges()
        var seconds = time_t(epochSeconds)
        var fields = tm()
        localtime_r(&seconds, &fields)
        return Int(fields.tm_gmtoff)
    }
}
