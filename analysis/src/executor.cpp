// The thread executor, and the choice between it and an injected one.

#include "collsim/analysis/executor.hpp"

#include "parallel.hpp"

namespace collsim::analysis {

void ThreadExecutor::run(const SweepItems& items) const {
  detail::parallel_for(items.count, threads_, items.run, items.done);
}

void run_items(const Executor* executor, unsigned threads, const SweepItems& items) {
  if (executor != nullptr) {
    executor->run(items);
    return;
  }
  ThreadExecutor(threads).run(items);
}

} // namespace collsim::analysis
