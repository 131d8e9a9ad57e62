// The thread executor, and the choice between it and an injected one.

#include "collsim/analysis/executor.hpp"

#include "parallel.hpp"

#include "collsim/analysis/memory_gate.hpp"

namespace collsim::analysis {

void ThreadExecutor::run(const SweepItems& items) const {
  MemoryGate gate(memory_budget_);
  detail::parallel_for(
      items.count, threads_, [&](std::size_t i) { gate.run(i, items.run); }, items.done);
}

void run_items(const Executor* executor, unsigned threads, const SweepItems& items) {
  if (executor != nullptr) {
    executor->run(items);
    return;
  }
  ThreadExecutor(threads, available_memory()).run(items);
}

} // namespace collsim::analysis
