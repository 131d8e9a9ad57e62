#pragma once
// Storage for arrays of tens of millions of elements (schedule operations, engine state).
//
// Engines walk thousands of ranks' programs at once, so consecutive accesses land on different
// 4 KiB pages and the TLB, not the cache, becomes the bottleneck (measured: most of the loggp
// engine's time on a 4096-rank ring went into page walks). Large allocations therefore ask the
// kernel for transparent huge pages (madvise(MADV_HUGEPAGE)); where THP is disabled this is a
// no-op and behaviour is unchanged.

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
    if (bytes < 4 * kHuge) {
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
    if (n * sizeof(T) < 4 * kHuge) {
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
