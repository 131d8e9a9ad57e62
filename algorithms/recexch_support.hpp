#pragma once
// Internal: the rank layout of MPICH's recursive-exchange ("recexch") algorithms, shared by the
// allreduce recexch and k_reduce_scatter_allgather (through detail::recexch_neighbours), the
// allgather recexch_doubling / recexch_halving and the recexch barrier.
//
// Source: MPICH src/mpi/coll/algorithms/recexchalgo/recexchalgo.c
// (MPII_Recexchalgo_get_neighbors, _get_count_and_offset, _reverse_digits_step2,
// _origrank_to_step2rank, _step2rank_to_origrank); reimplemented from its description:
//   * k is lowered to max(p, 2) when p < k; p' = the largest power of k <= p takes part in step 2,
//     rem = p - p' ranks do not.
//   * T = rem k / (k-1) (integer division). Ranks below T form groups of k consecutive ranks: the
//     first k-1 of a group do not take part and hand their data to the group's last rank (or to
//     rank T when that rank is beyond T-1); rank T also collects the ranks of an incomplete last
//     group. Ranks >= T take part as they are.
//   * Step-2 rank s <-> original rank: s < rem/(k-1) ? s k + k-1 : s + rem.
//   * Phase j of step 2: a rank exchanges with the k-1 ranks whose step-2 ranks differ from its
//     own only in base-k digit j (distance k^j), in increasing digit order.
//   * At level j a step-2 rank s stands for the original ranks (orig(m - 1), orig(m - 1 + k^j)],
//     m = floor(s / k^j) k^j (orig(-1) = -1): a contiguous range that includes the ranks folded
//     into it.

#include <cstdint>
#include <vector>

namespace collsim::algorithms::detail {

class RecexchLayout {
public:
  /// `radix` >= 2; p >= 1.
  RecexchLayout(std::uint32_t p, std::uint32_t radix) {
    k_ = p < radix ? (p > 2 ? p : 2) : radix;
    std::uint64_t pofk = 1;
    std::uint32_t phases = 0;
    while (pofk * k_ <= p) {
      pofk *= k_;
      ++phases;
    }
    p_of_k_ = static_cast<std::uint32_t>(pofk);
    phases_ = phases;
    rem_ = p - p_of_k_;
    t_ = static_cast<std::uint32_t>(std::uint64_t{rem_} * k_ / (k_ - 1));
  }

  [[nodiscard]] std::uint32_t radix() const { return k_; }             ///< k after MPICH's lowering
  [[nodiscard]] std::uint32_t participants() const { return p_of_k_; } ///< p'
  [[nodiscard]] std::uint32_t phases() const { return phases_; }       ///< log_k p'
  [[nodiscard]] std::uint32_t extra() const { return rem_; }           ///< p - p'

  /// The rank a non-participating rank hands its data to, or -1 for a participating rank.
  [[nodiscard]] std::int64_t step1_sendto(std::uint32_t r) const {
    if (r >= t_ || r % k_ == k_ - 1) {
      return -1;
    }
    const std::uint32_t to = r + (k_ - 1 - r % k_);
    return to > t_ - 1 ? t_ : to;
  }
  /// The ranks a participating rank collects from in step 1, in MPICH's order.
  [[nodiscard]] std::vector<std::uint32_t> step1_recvfrom(std::uint32_t r) const {
    std::vector<std::uint32_t> out;
    if (r < t_) {
      if (r % k_ == k_ - 1) {
        for (std::uint32_t i = 0; i + 1 < k_; ++i) {
          out.push_back(r - i - 1);
        }
      }
    } else if (r == t_ && t_ >= 1 && (t_ - 1) % k_ != k_ - 1) {
      const std::uint32_t senders = (t_ - 1) % k_ + 1;
      for (std::uint32_t i = 0; i < senders; ++i) {
        out.push_back(t_ - 1 - i);
      }
    }
    return out;
  }
  [[nodiscard]] std::uint32_t to_step2(std::uint32_t r) const { return r < t_ ? r / k_ : r - rem_; }
  [[nodiscard]] std::int64_t to_orig(std::int64_t s) const {
    if (s < 0) {
      return -1;
    }
    return s < rem_ / (k_ - 1) ? s * k_ + (k_ - 1) : s + rem_;
  }
  /// Phase `phase` neighbours of participating rank r (original ranks), k-1 of them.
  [[nodiscard]] std::vector<std::uint32_t> neighbours(std::uint32_t r, std::uint32_t phase) const {
    const std::uint64_t s = to_step2(r);
    std::uint64_t power = 1;
    for (std::uint32_t j = 0; j < phase; ++j) {
      power *= k_;
    }
    const std::uint64_t digit = (s / power) % k_;
    std::vector<std::uint32_t> out;
    for (std::uint64_t i = 0; i < k_; ++i) {
      if (i != digit) {
        const std::uint64_t nbr = s - digit * power + i * power;
        out.push_back(static_cast<std::uint32_t>(to_orig(static_cast<std::int64_t>(nbr))));
      }
    }
    return out;
  }
  /// The original ranks [first, first + count) participating rank r stands for at `level`.
  struct RankRange {
    std::uint32_t first = 0;
    std::uint32_t count = 0;
  };
  [[nodiscard]] RankRange level_range(std::uint32_t r, std::uint32_t level) const {
    std::uint64_t power = 1;
    for (std::uint32_t j = 0; j < level; ++j) {
      power *= k_;
    }
    const auto s = static_cast<std::int64_t>(to_step2(r));
    const std::int64_t low =
        (s / static_cast<std::int64_t>(power)) * static_cast<std::int64_t>(power) - 1;
    const std::int64_t high = low + static_cast<std::int64_t>(power);
    const std::int64_t orig_low = to_orig(low);
    const std::int64_t orig_high = to_orig(high);
    return {static_cast<std::uint32_t>(orig_low + 1),
            static_cast<std::uint32_t>(orig_high - orig_low)};
  }
  /// The participating rank whose step-2 rank has r's base-k digits reversed.
  [[nodiscard]] std::uint32_t reversed(std::uint32_t r) const {
    std::uint64_t s = to_step2(r);
    std::uint64_t rev = 0;
    for (std::uint32_t j = 0; j < phases_; ++j) {
      rev = rev * k_ + s % k_;
      s /= k_;
    }
    return static_cast<std::uint32_t>(to_orig(static_cast<std::int64_t>(rev)));
  }

private:
  std::uint32_t k_ = 2;
  std::uint32_t p_of_k_ = 1;
  std::uint32_t phases_ = 0;
  std::uint32_t rem_ = 0;
  std::uint32_t t_ = 0;
};

} // namespace collsim::algorithms::detail
