#pragma once
// Internal: UCC's recursive k-nomial pattern (UCC v1.1.0 src/coll_patterns/recursive_knomial.h
// and sra_knomial.h), shared by UCC's knomial and SRA knomial allreduces and its SAG knomial
// broadcast (allreduce_recursive_knomial.cpp, allreduce_sra_knomial.cpp,
// bcast/bcast_sag_knomial.cpp).

#include "collsim/core/schedule.hpp"
#include "generator_support.hpp"

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

/// One iteration of a loop rank in the SRA layout (sra_knomial.h): the rank's block at this
/// iteration, cut into one near-equal segment per member present (the first length mod m one
/// byte longer), the rank keeping segment `self`.
struct UccStep {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::vector<std::uint32_t> members;
  std::size_t self = 0;
  /// The operations of this iteration that read its segments before the allgather overwrites
  /// them (the reduce-scatter's or the scatter's sends; local indices).
  std::vector<std::uint32_t> sends;

  [[nodiscard]] core::Range segment(std::size_t j) const {
    const auto [b, len] = core::block_range(length, static_cast<std::uint32_t>(members.size()), j);
    return data_range(offset + b, len);
  }
};

/// Loop rank l's iterations over a vector of n bytes: the whole vector at iteration 0, then each
/// time the segment l keeps.
inline void ucc_steps(const UccKnomialPattern& pat, std::uint32_t l, std::uint64_t n,
                      std::vector<UccStep>& steps) {
  steps.clear();
  std::uint64_t offset = 0;
  std::uint64_t length = n;
  std::uint64_t d = 1;
  for (std::uint32_t i = 0; i < pat.iterations; ++i, d *= pat.k) {
    UccStep st;
    st.offset = offset;
    st.length = length;
    pat.members(l, d, st.members);
    st.self = static_cast<std::size_t>(std::find(st.members.begin(), st.members.end(), l) -
                                       st.members.begin());
    const core::Range mine = st.segment(st.self);
    offset = mine.offset;
    length = mine.length;
    steps.push_back(std::move(st));
  }
}

/// SRA's k-nomial allgather (allgather_knomial.c), the iterations backwards: each member sends
/// its segment to the others, waiting for `prev`, and receives theirs, waiting also for the
/// iteration's `sends`. `real` maps a loop rank to its rank; `prev` ends as the last receives.
template <class Out, class Real>
void emit_ucc_allgather(Out& out, const std::vector<UccStep>& steps, const UccKnomialPattern& pat,
                        Real real, std::vector<std::uint32_t>& prev) {
  std::vector<std::uint32_t> next;
  std::vector<std::uint32_t> deps;
  const core::Range none{};
  for (std::size_t s = steps.size(); s-- > 0;) {
    const UccStep& st = steps[s];
    for (std::size_t j = 0; j < st.members.size(); ++j) {
      if (j != st.self) {
        out.add(core::OpKind::send, real(pat.rank_of(st.members[j])), st.segment(st.self), none,
                prev);
      }
    }
    next.clear();
    deps = prev;
    deps.insert(deps.end(), st.sends.begin(), st.sends.end());
    for (std::size_t j = 0; j < st.members.size(); ++j) {
      if (j != st.self) {
        next.push_back(out.add(core::OpKind::recv, real(pat.rank_of(st.members[j])), st.segment(j),
                               none, deps));
      }
    }
    if (!next.empty()) {
      prev = next;
    }
  }
}

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
