// The circulant-graph broadcast schedule (circ_graph_support.hpp).

#include "circ_graph_support.hpp"

#include "collsim/core/errors.hpp"

#include <fmt/format.h>

namespace collsim::algorithms::detail {
namespace {

/// The depth-first search for one rank's receive schedule (Traff, arXiv 2312.11236; MPICH
/// all_blocks in bcast_intra_circ_qvring.c). Candidates are the baseblocks e = q, q-1, ..., 0 not
/// yet taken, kept in a doubly linked list in decreasing order so that each is found in O(1) and
/// removed once taken; the root's block q stands for the rank's own baseblock, which is removed
/// before the search.
class ReceiveSearch {
public:
  ReceiveSearch(const std::vector<std::uint32_t>& skip, std::uint32_t q)
      : skip_(skip), q_(q), next_(q + 2), prev_(q + 2), found_(q) {}

  /// Fills `out` (q entries) with R[k] of relative rank r whose baseblock is b.
  void run(std::uint32_t p, std::uint32_t r, std::uint32_t b, std::int8_t* out) {
    const auto q = static_cast<std::int32_t>(q_);
    // Index e + 1 holds candidate e; index 0 is the list's end marker (e = -1).
    for (std::int32_t e = -1; e <= q; ++e) {
      next(e) = e - 1;
      prev(e) = e + 1;
    }
    prev(q) = -1;
    next(-1) = q;
    prev(-1) = 0;
    unlink(static_cast<std::int32_t>(b));
    // Ranks are shifted by p so that r - Skip[k] stays non-negative (the search is mod p).
    const std::int64_t target = std::int64_t{p} + r;
    const std::uint32_t filled = search(target, 0, 2 * std::int64_t{p}, q, 0);
    if (filled != q_) {
      throw core::InternalError(
          fmt::format("circ_graph: the receive schedule of rank {} of {} has {} of {} rounds", r, p,
                      filled, q_));
    }
    for (std::uint32_t k = 0; k < q_; ++k) {
      const std::int32_t e = found_[k];
      out[k] = static_cast<std::int8_t>(e == q ? static_cast<std::int32_t>(b) : e - q);
    }
  }

private:
  std::int32_t& next(std::int32_t e) { return next_[static_cast<std::size_t>(e + 1)]; }
  std::int32_t& prev(std::int32_t e) { return prev_[static_cast<std::size_t>(e + 1)]; }
  void unlink(std::int32_t e) {
    next(prev(e)) = next(e);
    prev(next(e)) = prev(e);
  }
  [[nodiscard]] std::int64_t skip(std::uint32_t k) const { return skip_[k]; }

  /// Rounds k onwards: extends the partial sum `sum` (whose last term is Skip[e] or larger) by
  /// candidates e, e', ... in decreasing order, each sum kept below `bound` (strictly decreasing
  /// choices); a sum in (target - Skip[k+1], target - Skip[k]] names the block of round k, and
  /// larger sums are extended first (recursively) so that the largest baseblock in the window is
  /// taken. Returns the next round to fill.
  std::uint32_t search(std::int64_t target, std::int64_t sum, std::int64_t bound, std::int32_t e,
                       std::uint32_t k) {
    while (e != -1 && k < q_) {
      const std::int64_t reach = sum + skip(static_cast<std::uint32_t>(e));
      if (reach <= target - skip(k) && reach < bound) {
        if (reach <= target - skip(k + 1)) {
          k = search(target, reach, bound, e, k);
          if (k == q_) {
            return k;
          }
        }
        if (sum > target - skip(k + 1)) {
          return k;
        }
        bound = reach;
        found_[k++] = e;
        unlink(e);
      }
      e = next(e);
    }
    return k;
  }

  const std::vector<std::uint32_t>& skip_;
  std::uint32_t q_;
  std::vector<std::int32_t> next_;
  std::vector<std::int32_t> prev_;
  std::vector<std::int32_t> found_;
};

} // namespace

CirculantGraph::CirculantGraph(std::uint32_t p) : p_(p), q_(std::max(1U, ceil_log2(p))) {
  if (p < 2) {
    throw core::InternalError("circ_graph: a circulant graph needs at least 2 ranks");
  }
  skip_.assign(q_ + 1, 0);
  skip_[q_] = p;
  for (std::uint32_t k = q_; k-- > 0;) {
    skip_[k] = skip_[k + 1] / 2 + (skip_[k + 1] & 1U);
  }
  recv_.assign(std::size_t{p} * q_, 0);
  ReceiveSearch search(skip_, q_);
  for (std::uint32_t r = 0; r < p; ++r) {
    search.run(p, r, baseblock(r), recv_.data() + std::size_t{r} * q_);
  }
}

std::uint32_t CirculantGraph::baseblock(std::uint32_t r) const {
  std::uint64_t sum = 0;
  for (std::uint32_t k = q_; k-- > 0;) {
    if (sum + skip_[k] == r) {
      return k;
    }
    if (sum + skip_[k] < r) {
      sum += skip_[k];
    }
  }
  return q_;
}

std::vector<ParamSpec> circulant_params(const std::string& chunk_help) {
  return {{"chunk_size", kCircGraphChunkSize, 0, std::int64_t{1} << 30, chunk_help},
          {"q_len", kCircGraphQueueLength, 2, 1 << 20,
           "requests a rank keeps in flight (MPICH MPIR_CVAR_CIRC_GRAPH_Q_LEN)"}};
}

std::uint64_t circulant_chunk_size(const Request& req) {
  const auto it = req.params.find("chunk_size");
  return static_cast<std::uint64_t>(it == req.params.end() ? kCircGraphChunkSize : it->second);
}

std::uint32_t circulant_queue_length(const Request& req) {
  const auto it = req.params.find("q_len");
  return static_cast<std::uint32_t>(it == req.params.end() ? kCircGraphQueueLength : it->second);
}

std::vector<CirculantRound> circulant_rounds(std::uint32_t q, std::uint64_t blocks) {
  std::vector<CirculantRound> out;
  if (blocks == 0) {
    return out;
  }
  // MPICH starts at round x so that the last phase ends exactly with block N-1's round.
  const std::uint64_t x = (q - (blocks - 1) % q) % q;
  out.reserve(blocks - 1 + q);
  for (std::uint64_t i = x; i < x + blocks - 1 + q; ++i) {
    out.push_back({static_cast<std::uint32_t>(i % q),
                   static_cast<std::int64_t>(q * (i / q)) - static_cast<std::int64_t>(x)});
  }
  return out;
}

std::uint64_t circulant_block_count(std::uint64_t n, std::uint64_t chunk_size) {
  if (n == 0) {
    return 0;
  }
  return chunk_size == 0 ? 1 : (n + chunk_size - 1) / chunk_size;
}

std::pair<std::uint64_t, std::uint64_t>
circulant_block_range(std::uint64_t n, std::uint64_t chunk_size, std::uint64_t j) {
  if (chunk_size == 0) {
    return {0, n};
  }
  const std::uint64_t begin = std::min(n, j * chunk_size);
  return {begin, std::min(n, begin + chunk_size) - begin};
}

} // namespace collsim::algorithms::detail
