// Split binary tree broadcast (algorithms.md BC5).
//
// Source: Open MPI ompi_coll_base_bcast_intra_split_bintree (coll/tuned bcast algorithm 4); SMPI
// "ompi_split_bintree". Open MPI's fixed rules ran it with 1 KiB and 8 KiB segments; 8 KiB is the
// default here.
//
// Cost, k = ceil(n/2s) segments per half, h = floor(lg p): about 2(h - 1 + k)(a + s b) + a + n/2 b
// [algorithms.md, derived]: each half is pipelined down one subtree of the binary tree (the root
// alternates segments of the two halves), then every rank swaps halves with a mirror rank. The
// subtrees differ in depth, so no exact closed form is declared.
//
// Schedule, relative rank vr, on Open MPI's level-order binary tree (bcast_reduce_trees.hpp), whose
// left subtree (under vr 1) holds the odd and the right subtree (under vr 2) the even relative
// ranks. The vector is cut into half 0 = [0, ceil(n/2)) and half 1 = the rest:
//   tree phase: the root sends segment j of half 0 to its left child and segment j of half 1 to
//     its right child, for each j; an odd rank receives half 0's segments from its parent and
//     forwards each to its children, an even rank does the same with half 1.
//   exchange: odd vr and vr+1 swap their halves in one message each; when p is even, vr = p-1
//     has no partner and receives half 1 from the root.
// As Open MPI does, a vector too short to split into two halves of at least one segment each
// (n < 2, or segment_size above the smaller half) falls back to the pipelined chain.
// Dependencies: a forwarded segment waits for its receive; the exchange send waits for every
// segment of its half; the exchange receive writes bytes nothing else touches.

#include "bcast/bcast_algorithms.hpp"
#include "bcast/bcast_reduce_trees.hpp"
#include "bcast/bcast_scatter_support.hpp"

#include <vector>

namespace collsim::algorithms {
namespace {

constexpr const char* kName = "split_binary_tree";
constexpr std::int64_t kDefaultSegment = std::int64_t{8} << 10;

std::uint64_t segment_of(const Request& req) {
  return static_cast<std::uint64_t>(detail::param_or(req, "segment_size", kDefaultSegment));
}

/// Open MPI's condition for falling back to the chain.
bool falls_back(std::uint64_t n, std::uint64_t segment) {
  const std::uint64_t small_half = n / 2;
  return small_half == 0 || segment > small_half;
}

template <class Emitter>
void emit(Emitter& e, std::uint32_t p, core::Rank root, std::uint64_t n, std::uint64_t segment) {
  const std::uint64_t h0 = n - n / 2; // half 0 is the longer one
  const std::array<std::pair<std::uint64_t, std::uint64_t>, 2> half{
      {{0, h0}, {h0, n - h0}}}; // offset, length
  const std::array<std::uint64_t, 2> segs{detail::segment_count(half[0].second, segment),
                                          detail::segment_count(half[1].second, segment)};
  const auto seg = [&](int lr, std::uint64_t j) {
    const auto [off, len] = half[static_cast<std::size_t>(lr)];
    if (segment == 0 || segment >= len) {
      return detail::data_range(off, len);
    }
    const std::uint64_t b = j * segment;
    return detail::data_range(off + b, std::min(segment, len - b));
  };
  const auto real = [&](std::uint64_t vr) { return static_cast<core::Rank>((vr + root) % p); };
  const detail::TreeShape tree = detail::kary_tree(2);
  detail::TreeLinks links;
  std::vector<std::uint32_t> got;
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    e.begin_rank(r);
    tree(p, root, r, links);
    const std::uint32_t vr = r >= root ? r - root : r + p - root;
    if (vr == 0) {
      for (std::uint64_t j = 0; j < std::max(segs[0], segs[1]); ++j) {
        for (std::size_t c = 0; c < links.children.size(); ++c) {
          if (j < segs[c]) {
            e.send(links.children[c], seg(static_cast<int>(c), j), {});
          }
        }
      }
      if (p % 2 == 0) {
        e.send(real(p - 1), detail::data_range(half[1].first, half[1].second), {});
      }
      continue;
    }
    const int lr = vr % 2 == 1 ? 0 : 1;
    const std::uint64_t k = segs[static_cast<std::size_t>(lr)];
    got.assign(1, e.recv(links.parent, seg(lr, 0), {}));
    for (std::uint64_t j = 0; j < k; ++j) {
      if (j + 1 < k) {
        got.push_back(e.recv(links.parent, seg(lr, j + 1), {}));
      }
      dep[0] = got[j];
      for (const core::Rank c : links.children) {
        e.send(c, seg(lr, j), dep);
      }
    }
    const auto [other_off, other_len] = half[static_cast<std::size_t>(1 - lr)];
    if (p % 2 == 0 && vr == p - 1) {
      e.recv(real(0), detail::data_range(other_off, other_len), {});
      continue;
    }
    const core::Rank pair = real(vr % 2 == 1 ? vr + 1 : vr - 1);
    const auto [mine_off, mine_len] = half[static_cast<std::size_t>(lr)];
    e.send(pair, detail::data_range(mine_off, mine_len), got);
    e.recv(pair, detail::data_range(other_off, other_len), {});
  }
}

detail::OpCounts counts(const Request& req) {
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t s = segment_of(req);
  if (falls_back(n, s)) {
    return detail::tree_bcast_counts(req.ranks, req.root, detail::segment_count(n, s),
                                     detail::chain_tree(1));
  }
  detail::CountingEmitter c;
  if (req.ranks > 1) {
    emit(c, req.ranks, req.root, n, s);
  }
  return c.counts;
}

core::Schedule generate(const Request& req) {
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t s = segment_of(req);
  if (falls_back(n, s)) {
    return detail::generate_tree_bcast(req, kName, detail::chain_tree(1), s);
  }
  core::Schedule sched(make_header(req, 0, kName));
  const detail::OpCounts c = counts(req);
  sched.reserve(c.ops, c.deps);
  if (req.ranks > 1) {
    detail::ScheduleEmitter e{sched};
    emit(e, req.ranks, req.root, n, s);
  }
  sched.finish();
  return sched;
}

} // namespace

AlgorithmInfo describe_bcast_split_binary_tree() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::bcast;
  a.summary = "each half of the vector pipelined down one subtree of a binary tree, then mirror "
              "ranks swap halves";
  a.source = "Open MPI ompi_coll_base_bcast_intra_split_bintree";
  a.aliases = {"ompi:4", "ompi:split_binary_tree", "smpi:ompi_split_bintree"};
  a.params = {{"segment_size", kDefaultSegment, 0, std::int64_t{1} << 30,
               "bytes per pipeline segment within each half (0: each half in one message)"}};
  a.constraints = {"n < 2, or segment_size above n/2, falls back to the pipelined chain (as Open "
                   "MPI does)"};
  a.check = [](const Request& req) { return detail::size_limit_refusal(counts(req)); };
  a.generate = generate;
  a.cost = [](const Request&) { return std::optional<CostTerms>{}; };
  a.cost_formula = "about 2(h - 1 + k)(a + s b) + a + n/2 b, h = floor(lg p), k = ceil(n/2s) "
                   "(approximate: no exact form)";
  return a;
}

} // namespace collsim::algorithms
