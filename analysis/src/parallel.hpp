#pragma once
// Internal to analysis: runs independent work items on a few threads, as studies and validation
// do (each point is its own engine run).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace collsim::analysis::detail {

/// Calls body(i) for i in [0, n) on `threads` threads (0: all cores; never more than n), the
/// calling thread being one of them. The first exception stops the remaining items from starting
/// and is rethrown once every thread has finished. `done` (optional) is called after each item
/// that ran, with the count finished so far.
inline void parallel_for(std::size_t n, unsigned threads,
                         const std::function<void(std::size_t)>& body,
                         const std::function<void(std::size_t)>& done = {}) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> finished{0};
  std::exception_ptr failure;
  std::mutex failure_lock;
  auto worker = [&] {
    while (true) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n) {
        return;
      }
      try {
        body(i);
      } catch (...) {
        const std::lock_guard lock(failure_lock);
        if (!failure) {
          failure = std::current_exception();
        }
        next = n;
      }
      const std::size_t count = finished.fetch_add(1) + 1;
      if (done) {
        done(count);
      }
    }
  };
  unsigned count = threads != 0 ? threads : std::max(1U, std::thread::hardware_concurrency());
  count = static_cast<unsigned>(std::min<std::size_t>(count, std::max<std::size_t>(1, n)));
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < count; ++t) {
      pool.emplace_back(worker);
    }
    worker();
  }
  if (failure) {
    std::rethrow_exception(failure);
  }
}

} // namespace collsim::analysis::detail
