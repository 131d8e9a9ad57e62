// Evaluation of Open MPI coll/tuned's fixed decision tables (ompi_rule_table.hpp).

#include "ompi_rule_table.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/units.hpp"

#include <fmt/format.h>

namespace collsim::analysis::detail {
namespace {

std::string p_text(const Row& row, std::uint32_t previous_bound) {
  switch (row.p_test) {
  case Row::P::equals: return fmt::format("p == {}", row.p_bound);
  case Row::P::below: return fmt::format("p < {}", row.p_bound);
  case Row::P::otherwise:
    return previous_bound == 0 ? std::string{"any p"} : fmt::format("p >= {}", previous_bound);
  }
  return {};
}

std::string m_text(std::uint64_t lower, std::uint64_t upper, bool has_upper) {
  const auto b = [](std::uint64_t v) { return core::format_bytes(core::Bytes{v}); };
  if (!has_upper) {
    return lower == 0 ? std::string{"any m"} : fmt::format("m >= {}", b(lower));
  }
  return lower == 0 ? fmt::format("m < {}", b(upper))
                    : fmt::format("{} <= m < {}", b(lower), b(upper));
}

} // namespace

OmpiRule evaluate_rows(const std::vector<Row>& rows, std::uint32_t ranks, std::uint64_t m,
                       const std::string& suffix, bool sized) {
  std::uint32_t previous_bound = 0;
  for (const auto& row : rows) {
    const bool applies = row.p_test == Row::P::otherwise ||
                         (row.p_test == Row::P::equals && ranks == row.p_bound) ||
                         (row.p_test == Row::P::below && ranks < row.p_bound);
    if (!applies) {
      if (row.p_test == Row::P::below) {
        previous_bound = row.p_bound;
      }
      continue;
    }
    const std::string where = p_text(row, previous_bound) + suffix;
    std::uint64_t lower = 0;
    for (const auto& step : row.steps) {
      if (m < step.below) {
        return {step.id,
                fmt::format("{}: {} -> {}", where, m_text(lower, step.below, true), step.id)};
      }
      lower = step.below;
    }
    const std::string m_part = sized ? ": " + m_text(lower, 0, false) : std::string{};
    return {row.otherwise, fmt::format("{}{} -> {}", where, m_part, row.otherwise)};
  }
  throw core::InternalError("ompi41_fixed_rule: a decision table has no final branch");
}

} // namespace collsim::analysis::detail
