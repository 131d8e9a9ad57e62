#pragma once
// Internal: UCC's recursive k-nomial pattern (UCC v1.1.0 src/coll_patterns/recursive_knomial.h),
// shared by UCC's knomial and SRA knomial allreduces (allreduce_recursive_knomial.cpp,
// allreduce_sra_knomial.cpp).

#include "collsim/core/schedule.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace collsim::algorithms::detail {

/// UCC's recursive k-nomial pattern for p ranks (recursive_knomial.h).
struct UccKnomialPattern {
  std::uint32_t k = 2;
  std::uint32_t iterations = 0; ///< pow_radix_sup
  std::uint32_t n_extra = 0;
  std::uint32_t loop_size = 0; ///< p - n_extra

  UccKnomialPattern(std::uint32_t p, std::uint32_t radix) : k(radix) {
    std::uint64_t fs = k;
    iterations = 1;
    while (fs < p) {
      ++iterations;
      fs *= k;
    }
    const std::uint64_t full = fs != p ? fs / k : fs;
    n_extra = static_cast<std::uint32_t>(p - p / full * full);
    loop_size = p - n_extra;
  }
  [[nodiscard]] bool extra(core::Rank r) const { return r < 2 * n_extra && r % 2 == 1; }
  [[nodiscard]] bool proxy(core::Rank r) const { return r < 2 * n_extra && r % 2 == 0; }
  [[nodiscard]] std::uint32_t loop_rank(core::Rank r) const {
    return r < 2 * n_extra ? r / 2 : r - n_extra;
  }
  [[nodiscard]] core::Rank rank_of(std::uint32_t l) const {
    return l < n_extra ? 2 * l : l + n_extra;
  }
  /// The members of loop rank l's group at distance d, in segment order (l's included).
  void members(std::uint32_t l, std::uint64_t d, std::vector<std::uint32_t>& out) const {
    out.clear();
    const std::uint64_t step = d * k;
    const std::uint64_t base = l - l % step + l % d;
    for (std::uint32_t j = 0; j < k; ++j) {
      const std::uint64_t m = base + j * d;
      if (m < loop_size) {
        out.push_back(static_cast<std::uint32_t>(m));
      }
    }
  }
};

/// ucc_knomial_pattern_get_min_radix: min(k, p), lowered to 2 when `count` elements cannot be
/// split k ways.
inline std::uint32_t ucc_min_radix(std::uint64_t k, std::uint32_t p, std::uint64_t count) {
  std::uint64_t radix = std::min<std::uint64_t>(k, std::max<std::uint32_t>(p, 2));
  if ((count + radix - 1) / radix * (radix - 1) > count || radix - 1 > count) {
    radix = 2;
  }
  return static_cast<std::uint32_t>(radix);
}

} // namespace collsim::algorithms::detail
