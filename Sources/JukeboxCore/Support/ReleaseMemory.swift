#if canImport(Glibc)
import Glibc

/// glibc's `malloc_trim`, which `Glibc` does not export: it returns freed heap memory to the
/// system instead of keeping it for the process's next allocations.
@_silgen_name("malloc_trim")
private func malloc_trim(_ pad: Int) -> Int32

@_silgen_name("mallopt")
private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif

public enum ReleaseMemory {
    /// Tunes the allocator for a daemon that runs for months with bursts of large, short-lived
    /// allocations (a queue of thousands of entries, then cleared). Blocks of 256 KB and more
    /// get pages of their own, returned to the system when freed; glibc would otherwise raise
    /// that threshold after each such free and keep the next burst on the heap, fragmented.
    /// Two arenas are plenty for two cores and keep every thread's freed memory in few places.
    public static func configureAllocator() {
        #if canImport(Glibc)
        _ = mallopt(-3, 256 * 1024)  // M_MMAP_THRESHOLD
        _ = mallopt(-8, 2)  // M_ARENA_MAX
        #endif
    }

    /// Gives memory freed by the allocator back to the system. Costs a few milliseconds on a
    /// large heap, so it is called after large frees only.
    public static func now() {
        #if canImport(Glibc)
        _ = malloc_trim(0)
        #endif
    }
}
