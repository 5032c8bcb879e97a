#pragma once
// Process-wide allocator settings for a long-running process that keeps large caches (the
// operator). With glibc's defaults, the large transient buffers of a list (response bodies of
// megabytes) raise the dynamic mmap threshold, land on the heap between the cache's small
// long-lived objects, and leave it fragmented: RSS stays near the list's peak. Fixing the mmap
// and trim thresholds (which also turns off their dynamic growth) keeps RSS close to what is
// actually in use (measured in bench/kube: 29 -> 20 MiB for 3,000 cached Pods). The number of
// arenas is left alone so that the webhook threads do not contend. No-op on other C libraries.

namespace kvc::runtime {

// Call once, early in main(), before threads start.
void tuneAllocatorForCaches();

// Gives the free memory of the calling thread's arena back to the system: malloc_trim() for
// every arena's bins and the main heap, plus a large free in this thread's arena, which is
// what makes glibc shrink a thread heap's top (malloc_trim leaves that alone). An informer
// calls it after a list, whose parse garbage would otherwise stay resident. No-op elsewhere.
void releaseFreeMemory();

}  // namespace kvc::runtime
