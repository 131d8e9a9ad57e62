#pragma once
// Storage for arrays of tens of millions of elements (schedule operations, engine state).
//
// Engines walk thousands of ranks' programs at once, so consecutive accesses land on different
// 4 KiB pages and the TLB, not the cache, becomes the bottleneck (measured: most of the loggp
// engine's time on a 4096-rank ring went into page walks). Large allocations therefore ask the
// kernel for transparent huge pages (madvise(MADV_HUGEPAGE)); where THP is disabled this is a
// no-op and behaviour is unchanged. Every array of at least one huge page (2 MiB) takes them: the
// first touch of fresh memory costs a page fault per 4 KiB page otherwise, and on a virtual
// machine that was most of the time of schedules of a few hundred thousand operations (an
// Open MPI staged ring allreduce of 361,344 operations: loggp 97-102 -> 65-85 ns per operation,
// its lowering 66-69 -> 44-59, at 8 MiB and up before; docs/benchmarks.md "Library stacks").
// An array loses at most one huge page to the rounding.

#include <cstddef>
#include <cstdlib>
#include <new>
#include <sys/mman.h>
#include <vector>

namespace collsim::core {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;

  HugePageAllocator() = default;
  template <class U>
  constexpr HugePageAllocator(const HugePageAllocator<U>&) noexcept {} // NOLINT: rebinding

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHuge) {
      return static_cast<T*>(::operator new(bytes));
    }
    const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (p == nullptr) {
      throw std::bad_alloc();
    }
    ::madvise(p, rounded, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kHuge) {
      ::operator delete(p);
    } else {
      std::free(p);
    }
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

/// A std::vector whose large buffers live on huge pages.
template <class T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

} // namespace collsim::core
