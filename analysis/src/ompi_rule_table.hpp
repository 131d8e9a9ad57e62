#pragma once
// Open MPI coll/tuned's fixed decision functions as tables (internal to analysis): a list of
// communicator-size branches, each a chain of message-size steps, evaluated as the source's
// if/else chains with strict `<` on p and on the message size m. Shared by the 4.1 rules of the
// uniform collectives (ompi_defaults.cpp) and of the v-collectives (ompi_v_defaults.cpp).

#include "collsim/analysis/ompi_defaults.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace collsim::analysis::detail {

/// "m < below -> id": one branch of a size chain.
struct Step {
  std::uint64_t below = 0;
  int id = 0;
};

/// One communicator-size branch of a decision function. `p_bound` 0 marks the final `else`.
struct Row {
  enum class P { equals, below, otherwise };
  P p_test = P::below;
  std::uint32_t p_bound = 0;
  std::vector<Step> steps; ///< evaluated in order; the first with m < below wins
  int otherwise = 0;       ///< the id when no step matches
};

inline Row p_equals(std::uint32_t p, std::initializer_list<Step> steps, int otherwise) {
  return Row{Row::P::equals, p, steps, otherwise};
}
inline Row p_below(std::uint32_t p, std::initializer_list<Step> steps, int otherwise) {
  return Row{Row::P::below, p, steps, otherwise};
}
inline Row p_rest(std::initializer_list<Step> steps, int otherwise) {
  return Row{Row::P::otherwise, 0, steps, otherwise};
}

/// The id `rows` select for `ranks` and `m`, with the branch as text ("p < 8, commutative: 16 B
/// <= m < 8 KiB -> 3"): `suffix` follows the p test; `sized` false leaves m out (rules that look
/// at p only). InternalError when no branch applies.
[[nodiscard]] OmpiRule evaluate_rows(const std::vector<Row>& rows, std::uint32_t ranks,
                                     std::uint64_t m, const std::string& suffix, bool sized);

} // namespace collsim::analysis::detail
