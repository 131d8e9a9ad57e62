// Segmented ring allreduce (algorithms.md AR5): the ring reduce-scatter run once per phase on a
// slice of every block, so the reduction of one slice overlaps the transfer of the next, then a
// plain ring allgather of whole blocks.
//
// Source: Open MPI ompi_coll_base_allreduce_intra_ring_segmented (coll/tuned allreduce algorithm
// 5, "segmented_ring"; SMPI "ompi_ring_segmented"), step for step with a 1-byte datatype:
//   segcount = segment_size if 0 < segment_size < n, else n (COLL_BASE_COMPUTED_SEGCOUNT);
//   if n < p * segcount, Open MPI runs the regular ring (ompi_coll_base_allreduce_intra_ring),
//   which is this schedule with one phase; the fixed decision passes segment_size = 0, so there
//   #5 is the ring. (For n < p Open MPI's ring switches to recursive doubling; this schedule keeps
//   the ring with empty blocks, as the "ring" algorithm does.)
//   phases = n / (p segcount), plus one when the remainder is at least p and more than half of
//   p segcount. Block b = block_range(n, p, b); its phase-f slice = block_range(|block b|, phases,
//   f) within it (Open MPI's early/late split, twice).
//
// Schedule, rank r, prev = r-1, next = r+1, blocks mod p, for each phase f:
//   post a receive of the f-slice of block r-1 into inbuf[0]; send the f-slice of block r;
//   for k = 2..p-1: receive the f-slice of block r-k into inbuf[k odd ? 1 : 0], reduce the
//     previous inbuf into the f-slice of block r-k+1 and send that slice to next;
//   reduce the last inbuf into the f-slice of block r+1 (rank r now owns block r+1 for phase f).
// then the allgather: for k = 0..p-2 send whole block r+1-k to next, receive block r-k from prev
// into data. inbuf[0] and inbuf[1] are tmp[0, s) and tmp[s, 2s), s the largest slice (one buffer
// when p = 2).
//
// Dependencies: a receive into an inbuf waits for the reduction that last read it (possibly in the
// previous phase); a reduction waits for its receive; a forwarding send for its reduction; the
// first allgather send waits for the last reduction of every phase (each wrote a slice of block
// r+1); later allgather sends for the previous allgather receive; an allgather receive overwrites
// block r-k, so it waits for the sends that read its slices in every phase.
//
// Cost: Open MPI's comment: (phases + 1)(p - 1) steps; about (phases+1)(p-1) a + 2(p-1)/p n b +
// (p-1)/p n g with the reduction partly hidden. Exact only with one phase (the ring) when p
// divides n: 2(p-1) a + 2(p-1)/p n b + (p-1)/p n g; with several phases the ranks' pipelines
// drift apart on the loggp engine and cost() declines.

#include "allreduce/allreduce_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "segmented_ring";
constexpr const char* kSegment = "segment_size";

std::uint64_t segment_of(const Request& req) {
  const auto it = req.params.find(kSegment);
  return it == req.params.end() ? 0 : static_cast<std::uint64_t>(it->second);
}

/// Open MPI's number of phases (1: the regular ring).
std::uint64_t phase_count(std::uint32_t p, std::uint64_t n, std::uint64_t segment) {
  const std::uint64_t segcount = segment >= 1 && segment < n ? segment : n;
  const std::uint64_t round = std::uint64_t{p} * segcount;
  if (n < round || round == 0) {
    return 1;
  }
  std::uint64_t phases = n / round;
  const std::uint64_t rest = n % round;
  if (rest >= p && rest > round / 2) {
    ++phases;
  }
  return phases;
}

OpCounts segmented_ring_counts(std::uint32_t p, std::uint64_t phases) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  OpCounts c;
  c.ops = pp * (3 * (pp - 1) * phases + 2 * (pp - 1));
  // Per rank: the first phase (its first two receives have no earlier inbuf reader), the other
  // phases, then the allgather (first send: one per phase; receives: one per phase each).
  const std::uint64_t first = p == 2 ? 1 : 3 * pp - 6;
  const std::uint64_t later = 3 * pp - 4;
  c.deps = pp * (first + (phases - 1) * later + phases * pp + pp - 2);
  return c;
}

core::Schedule generate_segmented_ring(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t phases = phase_count(p, n, segment_of(req));
  const std::uint64_t slice_max = core::block_range(core::block_range(n, p, 0).second, phases, 0)
                                      .second; // Open MPI's max_segcount
  const std::uint64_t buffers = p > 2 ? 2 : 1;
  core::Schedule s(make_header(req, p > 1 ? buffers * slice_max : 0, kName));
  const OpCounts counts = segmented_ring_counts(p, phases);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const auto block = [&](std::uint32_t b) { return core::block_range(n, p, b); };
  const auto slice = [&](std::uint32_t b, std::uint64_t f) {
    const auto [offset, length] = block(b);
    const auto [within, part] = core::block_range(length, phases, f);
    return detail::data_range(offset + within, part);
  };
  const auto inbuf = [&](std::uint32_t i, std::uint64_t length) {
    return detail::tmp_range(i * slice_max, length);
  };
  const auto wrap = [p](std::int64_t b) {
    const std::int64_t m = b % static_cast<std::int64_t>(p);
    return static_cast<std::uint32_t>(m < 0 ? m + p : m);
  };

  std::vector<std::uint32_t> final_reduce(phases);                  // per phase, into block r+1
  std::vector<std::uint32_t> slice_send(phases * std::uint64_t{p}); // [f * p + block]
  std::vector<std::uint32_t> list;
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    const core::Rank next = wrap(std::int64_t{r} + 1);
    const core::Rank prev = wrap(std::int64_t{r} - 1);
    std::array<std::uint32_t, 2> reader{}; // the reduction that last read each inbuf
    std::array<bool, 2> read{};
    for (std::uint64_t f = 0; f < phases; ++f) {
      std::uint32_t in = 0;
      dep[0] = reader[0];
      std::uint32_t got = detail::add_op(s, OpKind::recv, prev,
                                         inbuf(0, slice(wrap(std::int64_t{r} - 1), f).length),
                                         std::span(dep.data(), read[0] ? 1 : 0));
      slice_send[f * p + r] = detail::add_op(s, OpKind::send, next, slice(r, f), {});
      for (std::uint32_t k = 2; k < p; ++k) {
        const std::uint32_t block_in = wrap(std::int64_t{r} - k);
        const std::uint32_t block_prev = wrap(std::int64_t{r} - k + 1);
        in ^= 1U;
        dep[0] = reader[in];
        const std::uint32_t now =
            detail::add_op(s, OpKind::recv, prev, inbuf(in, slice(block_in, f).length),
                           std::span(dep.data(), read[in] ? 1 : 0));
        const core::Range target = slice(block_prev, f);
        reader[in ^ 1U] = s.reduce(inbuf(in ^ 1U, target.length), target, {got});
        read[in ^ 1U] = true;
        slice_send[f * p + block_prev] = s.send(next, target, {reader[in ^ 1U]});
        got = now;
      }
      const core::Range target = slice(next, f);
      reader[in] = s.reduce(inbuf(in, target.length), target, {got});
      read[in] = true;
      final_reduce[f] = reader[in];
    }
    // Allgather of whole blocks (ompi_coll_base_sendrecv in a loop).
    std::uint32_t last_recv = 0;
    for (std::uint32_t k = 0; k + 1 < p; ++k) {
      const std::uint32_t send_block = wrap(std::int64_t{r} + 1 - k);
      const std::uint32_t recv_block = wrap(std::int64_t{r} - k);
      const auto [so, sl] = block(send_block);
      const auto [ro, rl] = block(recv_block);
      if (k == 0) {
        detail::add_op(s, OpKind::send, next, detail::data_range(so, sl), final_reduce);
      } else {
        dep[0] = last_recv;
        detail::add_op(s, OpKind::send, next, detail::data_range(so, sl), dep);
      }
      list.clear();
      for (std::uint64_t f = 0; f < phases; ++f) {
        list.push_back(slice_send[f * p + recv_block]);
      }
      last_recv = detail::add_op(s, OpKind::recv, prev, detail::data_range(ro, rl), list);
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> segmented_ring_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p < 2) {
    return CostTerms{};
  }
  if (phase_count(req.ranks, n, segment_of(req)) != 1 || n % p != 0) {
    return std::nullopt;
  }
  const auto moved = static_cast<double>((p - 1) * (n / p));
  return CostTerms{2.0 * static_cast<double>(p - 1), 2.0 * moved, moved};
}

} // namespace

AlgorithmInfo describe_allreduce_segmented_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "ring allreduce whose reduce-scatter runs in phases of segment-sized block slices";
  a.source = "Open MPI ompi_coll_base_allreduce_intra_ring_segmented";
  a.aliases = {"ompi:5", "ompi:segmented_ring", "smpi:ompi_ring_segmented"};
  a.params = {{kSegment, 0, 0, std::int64_t{1} << 30,
               "segment size in bytes (0: whole blocks, i.e. the plain ring, as Open MPI's fixed "
               "decision passes)"}};
  a.constraints = {"commutative operations only (the reduction order differs per block)"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(
        segmented_ring_counts(req.ranks, phase_count(req.ranks, req.bytes.value, segment_of(req))));
  };
  a.generate = generate_segmented_ring;
  a.cost = segmented_ring_cost;
  a.cost_formula = "one phase (segment_size 0 or n < p segment_size), p divides n: 2(p-1)a + "
                   "2(p-1)/p n b + (p-1)/p n g; otherwise about (phases+1)(p-1) a + 2(p-1)/p n b "
                   "+ (p-1)/p n g (not exact: the phases pipeline unevenly)";
  return a;
}

} // namespace collsim::algorithms
