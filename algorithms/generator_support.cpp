#include "generator_support.hpp"

#include <fmt/format.h>

namespace collsim::algorithms::detail {

std::string size_limit_refusal(const OpCounts& counts) {
  if (counts.ops > kMaxOps) {
    return fmt::format(
        "the schedule would need {} operations; the schedule format holds at most {}", counts.ops,
        kMaxOps);
  }
  if (counts.deps > kMaxDeps) {
    return fmt::format(
        "the schedule would need {} dependencies; the schedule format holds at most {}",
        counts.deps, kMaxDeps);
  }
  return {};
}

} // namespace collsim::algorithms::detail
