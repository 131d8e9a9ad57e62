// Recursive-doubling reduce-scatter (algorithms.md RS6): in step k rank r exchanges with r XOR 2^k
// everything except the blocks of its own aligned subtree of 2^k ranks, and combines what it
// receives, so that after ceil(lg p) steps its own block holds the reduction of all ranks. The
// operands stay in rank order, so MPICH uses it for non-commutative operations.
//
// Source: R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of collective communication
// operations in MPICH", IJHPCA 19(1), 2005; MPICH MPIR_Reduce_scatter_intra_recursive_doubling,
// followed step for step, including its non-power-of-two fix-up; SMPI "mpich_rdb".
//
// Cost (MPICH's comment; p = 2^k, p divides n): lg p a + n(lg p - (p-1)/p) b +
// n(lg p - (p-1)/p) g. It leaves out the packing of each step's two-piece message (a local copy
// of up to n bytes, free when copies are), so cost() declines; other rank counts add the fix-up
// messages inside the steps.
//
// Schedule, rank r, mask = 1, 2, 4, ... < p, tree(q) = q with its low lg(mask) bits cleared:
//   MPICH sends a derived datatype: data[0, start(tree(r))) and data[end(tree(r) + mask), n), the
//   blocks outside the rank's own subtree. Here the two pieces are packed into tmp[0, n) (two
//   copies), sent as one message, and received as one message into tmp[n, 2n) shaped by the
//   partner's subtree; two reductions unpack it into data.
//   When the partner r XOR mask does not exist (p not a power of two), MPICH forwards the received
//   message inside the subtree along a binomial tree (its "nprocs_completed" loop) and the ranks
//   without a partner combine that instead. n = 0 sends nothing, as MPICH returns at once.
//
// Dependencies are derived per buffer area (data, tmp send area, tmp receive area): an operation
// waits for the last writer of what it reads, and a writer waits for the operations that read the
// area since its last write (or for the last writer when there were none).

#include "generator_support.hpp"
#include "reduce_scatter/reduce_scatter_algorithms.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "recursive_doubling";

enum Area : std::uint8_t { kData = 0, kSendArea = 1, kRecvArea = 2 };

/// Builds (or, with `s` null, only counts) one rank's program, tracking for each area its last
/// writer and the readers since.
class Builder {
public:
  explicit Builder(core::Schedule* s) : s_(s) {}

  void begin_rank(core::Rank r) {
    if (s_ != nullptr) {
      s_->begin_rank(r);
    }
    next_ = 0;
    for (auto& a : areas_) {
      a.has_writer = false;
      a.readers.clear();
    }
  }

  /// An operation reading area `from` (or none) and writing area `to` (or none).
  void op(OpKind kind, core::Rank peer, core::Range target, core::Range source, int reads,
          int writes) {
    deps_.clear();
    if (reads >= 0 && areas_[reads].has_writer) {
      deps_.push_back(areas_[reads].writer);
    }
    if (writes >= 0) {
      const AreaState& w = areas_[writes];
      if (!w.readers.empty()) {
        deps_.insert(deps_.end(), w.readers.begin(), w.readers.end());
      } else if (w.has_writer) {
        deps_.push_back(w.writer);
      }
    }
    std::sort(deps_.begin(), deps_.end());
    deps_.erase(std::unique(deps_.begin(), deps_.end()), deps_.end());
    const std::uint32_t id = next_++;
    if (s_ != nullptr) {
      s_->add(kind, peer, target, source, deps_);
    }
    counts.ops += 1;
    counts.deps += deps_.size();
    if (reads >= 0) {
      areas_[reads].readers.push_back(id);
    }
    if (writes >= 0) {
      areas_[writes].has_writer = true;
      areas_[writes].writer = id;
      areas_[writes].readers.clear();
    }
  }

  OpCounts counts;

private:
  struct AreaState {
    bool has_writer = false;
    std::uint32_t writer = 0;
    std::vector<std::uint32_t> readers;
  };
  core::Schedule* s_;
  std::uint32_t next_ = 0;
  std::array<AreaState, 3> areas_{};
  std::vector<std::uint32_t> deps_;
};

/// Runs MPICH's algorithm for every rank through `b`.
void build(Builder& b, std::uint32_t p, std::uint64_t n) {
  if (p < 2 || n == 0) {
    return;
  }
  const auto start = [&](std::uint64_t block) {
    return block >= p ? n : core::block_range(n, p, block).first;
  };
  const core::Range none{};
  for (core::Rank r = 0; r < p; ++r) {
    b.begin_rank(r);
    std::uint32_t i = 0;
    for (std::uint64_t mask = 1; mask < p; mask <<= 1, ++i) {
      const std::uint64_t dst = r ^ mask;
      const std::uint64_t my_root = (std::uint64_t{r} >> i) << i;
      const std::uint64_t dst_root = (dst >> i) << i;
      // Send everything outside the own subtree; receive everything outside the partner's.
      const std::uint64_t send_head = start(my_root);
      const std::uint64_t send_tail = start(my_root + mask);
      const std::uint64_t send_len = send_head + (n - send_tail);
      const std::uint64_t recv_head = start(dst_root);
      const std::uint64_t recv_tail = start(dst_root + mask);
      const std::uint64_t recv_len = recv_head + (n - recv_tail);
      const core::Range recv_area = detail::tmp_range(n, recv_len);
      bool received = false;
      if (dst < p) {
        const auto peer = static_cast<core::Rank>(dst);
        b.op(OpKind::copy, 0, detail::tmp_range(0, send_head), detail::data_range(0, send_head),
             kData, kSendArea);
        b.op(OpKind::copy, 0, detail::tmp_range(send_head, n - send_tail),
             detail::data_range(send_tail, n - send_tail), kData, kSendArea);
        b.op(OpKind::send, peer, detail::tmp_range(0, send_len), none, kSendArea, -1);
        b.op(OpKind::recv, peer, recv_area, none, -1, kRecvArea);
        received = true;
      }
      if (dst_root + mask > p) {
        // MPICH's fix-up: ranks of this subtree whose partner is missing get the received message
        // from one that has it, along a binomial tree inside the subtree.
        const std::uint64_t completed = p - my_root - mask;
        std::uint32_t k = i;
        for (std::uint64_t tmp_mask = mask >> 1; tmp_mask > 0; tmp_mask >>= 1, --k) {
          const std::uint64_t peer = r ^ tmp_mask;
          const std::uint64_t tree_root = (std::uint64_t{r} >> k) << k;
          if (peer > r && r < tree_root + completed && peer >= tree_root + completed) {
            b.op(OpKind::send, static_cast<core::Rank>(peer), recv_area, none, kRecvArea, -1);
          } else if (peer < r && peer < tree_root + completed && r >= tree_root + completed) {
            b.op(OpKind::recv, static_cast<core::Rank>(peer), recv_area, none, -1, kRecvArea);
            received = true;
          }
        }
      }
      if (received) {
        b.op(OpKind::reduce, 0, detail::data_range(0, recv_head), detail::tmp_range(n, recv_head),
             kRecvArea, kData);
        b.op(OpKind::reduce, 0, detail::data_range(recv_tail, n - recv_tail),
             detail::tmp_range(n + recv_head, n - recv_tail), kRecvArea, kData);
      }
    }
  }
}

OpCounts recursive_doubling_counts(std::uint32_t p, std::uint64_t n) {
  Builder counter(nullptr);
  build(counter, p, n);
  return counter.counts;
}

core::Schedule generate_recursive_doubling(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, p > 1 ? 2 * n : 0, kName));
  const OpCounts counts = recursive_doubling_counts(p, n);
  s.reserve(counts.ops, counts.deps);
  Builder builder(&s);
  build(builder, p, n);
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_reduce_scatter_recursive_doubling() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::reduce_scatter;
  a.summary = "ceil(lg p) exchanges with rank XOR 2^k of everything outside the own subtree";
  a.source = "Thakur, Rabenseifner & Gropp, IJHPCA 2005; MPICH "
             "MPIR_Reduce_scatter_intra_recursive_doubling";
  a.aliases = {"mpich:recursive_doubling", "smpi:mpich_rdb"};
  a.check = [](const Request& req) {
    // The exact counts need a dry run of the generator; refuse what the IR cannot hold first,
    // from a bound: a step has 6 operations plus at most one per fix-up level.
    const std::uint64_t p = req.ranks;
    const std::uint64_t lg = detail::ceil_log2(req.ranks);
    const std::uint64_t bound = p * lg * (lg + 6);
    if (bound > core::Schedule::kMaxOps) {
      return detail::size_limit_refusal({bound, 0});
    }
    return std::string{};
  };
  a.generate = generate_recursive_doubling;
  a.cost_formula = "p = 2^k: lg p a + n(lg p - (p-1)/p) b + n(lg p - (p-1)/p) g, plus packing "
                   "copies (no exact closed form here)";
  return a;
}

} // namespace collsim::algorithms
