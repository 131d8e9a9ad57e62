#include "generator_support.hpp"

#include <fmt/format.h>

namespace collsim::algorithms::detail {

std::string size_limit_refusal(const OpCounts& counts) {
  if (counts.ops > core::Schedule::kMaxOps) {
    return fmt::format("the schedule would need {} operations; a schedule holds at most {}",
                       counts.ops, core::Schedule::kMaxOps);
  }
  return {};
}

} // namespace collsim::algorithms::detail
