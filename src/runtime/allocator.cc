#include "kvc/runtime/allocator.h"

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kvc::runtime {

void tuneAllocatorForCaches() {
#if defined(__GLIBC__)
  // Buffers of 128 KiB and more always get their own mapping, returned on free.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  // Free memory at the top of the heap goes back to the system beyond 1 MiB.
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
#endif
}

void releaseFreeMemory() {
#if defined(__GLIBC__)
  // A free of at least 64 KiB (FASTBIN_CONSOLIDATION_THRESHOLD) consolidates the arena and
  // trims its top beyond M_TRIM_THRESHOLD; below the mmap threshold it comes from the arena.
  void* block = malloc(96 * 1024);
  if (block != nullptr) {
    static_cast<volatile char*>(block)[0] = 0;
    free(block);
  }
  malloc_trim(0);
#endif
}

}  // namespace kvc::runtime
