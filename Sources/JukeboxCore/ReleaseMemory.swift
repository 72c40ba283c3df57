#if canImport(Glibc)
import Glibc

/// glibc's `malloc_trim`, which `Glibc` does not export: it returns freed heap memory to the
/// system instead of keeping it for the process's next allocations.
@_silgen_name("malloc_trim")
private func malloc_trim(_ pad: Int) -> Int32
#endif

public enum ReleaseMemory {
    /// Gives memory freed by the allocator back to the system. Costs a few milliseconds on a
    /// large heap, so it is called after large frees only.
    public static func now() {
        #if canImport(Glibc)
        _ = malloc_trim(0)
        #endif
    }
}
