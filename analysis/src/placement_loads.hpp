#pragma once
// The bytes a mapping puts on every directed link, and the congestion objective the placement
// search minimises by default (placement.hpp, Objective::time).

#include "collsim/analysis/placement.hpp"

#include <vector>

namespace collsim::analysis::detail {

/// Per-link bytes of an exchange under a mapping, updated when two ranks trade slots.
class LinkLoads {
public:
  LinkLoads(const PlacementProblem& p, const Mapping& m);
  /// Sum over links of (bytes / bandwidth)^2, s^2.
  [[nodiscard]] double congestion() const;
  /// The change of congestion() if ranks a and b traded slots in `m` (m as it is now); the
  /// change is kept until the next call so that commit() can apply it.
  double swap_delta(const Mapping& m, std::uint32_t a, std::uint32_t b);
  /// Applies the change the last swap_delta() computed.
  void commit();
  [[nodiscard]] const std::vector<double>& bytes() const { return bytes_; }

private:
  void move(std::uint32_t from_slot, std::uint32_t to_slot, double bytes);
  void clear_pending();
  const PlacementProblem& p_;
  std::vector<double> bytes_;
  std::vector<double> inv_bw2_; ///< 1 / bandwidth^2 per link
  std::vector<double> pending_; ///< the last swap's change per link (0 where untouched)
  std::vector<core::LinkId> touched_;
  std::vector<char> touched_flag_; ///< 1 for the links in touched_
};

} // namespace collsim::analysis::detail
