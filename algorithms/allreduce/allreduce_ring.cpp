// Ring allreduce (algorithms.md AR4): a reduce-scatter ring followed by an allgather ring over p
// blocks of about n/p bytes.
//
// Source: P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
// workstations", J. Parallel Distrib. Comput. 69(2), 2009; Open MPI
// ompi_coll_base_allreduce_intra_ring (coll/tuned allreduce algorithm 4); MPICH
// MPIR_Allreduce_intra_ring; SMPI "lr".
//
// Cost (n divisible by p): 2(p-1)a + 2(p-1)/p n b + (p-1)/p n g, bandwidth-optimal (algorithms.md
// section 6.1). When p does not divide n the blocks differ by one byte (block_range) and every step
// is paced by the largest block, so the closed form is not exact and cost() declines.
//
// Schedule, rank r, blocks taken mod p:
//   reduce-scatter step s = 0..p-2: send block r-s to r+1; recv_reduce block r-s-1 from r-1.
//   allgather step t = 0..p-2:      send block r+1-t to r+1; recv block r-t from r-1.
// After the reduce-scatter rank r holds the reduced block r+1, which the allgather forwards first.
// Blocks are received straight into `data` (recv_reduce): no block is received while a send of the
// same block is pending, so no scratch buffer is needed. Blocks shorter than p bytes may be empty;
// their zero-length messages are kept on both sides, as MPICH's ring sends them, so the schedule's
// shape (and its alpha term) does not depend on n.
//
// Dependencies, which are all a real implementation needs (4(p-1) operations, 3p-4 dependencies
// per rank): a send waits for the receive that produced its block; an allgather receive overwrites
// block r-t, so it waits for the reduce-scatter send of that block (which itself waited for the
// last reduction into it).

#include "allreduce/allreduce_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "ring";

OpCounts ring_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {4 * pp * (pp - 1), pp * (3 * pp - 4)};
}

core::Schedule generate_ring(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = detail::collapsed_counts(ring_counts(p), req);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  // Block b is data[offset[b], offset[b + 1]).
  std::vector<std::uint64_t> offset(static_cast<std::size_t>(p) + 1);
  for (std::uint32_t b = 0; b < p; ++b) {
    offset[b] = core::block_range(n, p, b).first;
  }
  offset[p] = n;
  const auto block = [&](std::uint32_t b) {
    return detail::data_range(offset[b], offset[b + 1] - offset[b]);
  };
  const auto before = [p](std::uint32_t b) { return b == 0 ? p - 1 : b - 1; };

  const std::uint32_t steps = p - 1;
  std::array<std::uint32_t, 1> dep{};
  // Every rank, or the representatives of a collapsed request (core/collapse.hpp): rank r's
  // program is rank 0's rotated by r when the blocks are equal (ring_symmetry).
  for (core::Rank r = 0; r < s.ranks(); ++r) {
    s.begin_rank(r);
    const core::Rank next = r + 1 == p ? 0 : r + 1;
    const core::Rank prev = before(r);
    // Reduce-scatter: send at local 2s, recv_reduce at local 2s + 1.
    std::uint32_t send_block = r;
    for (std::uint32_t step = 0; step < steps; ++step) {
      const std::uint32_t recv_block = before(send_block);
      // The recv_reduce of the previous step produced this block; the first send has its input.
      dep[0] = step == 0 ? 0 : 2 * step - 1;
      detail::add_op(s, OpKind::send, next, block(send_block),
                     std::span(dep.data(), step == 0 ? 0 : 1));
      detail::add_op(s, OpKind::recv_reduce, prev, block(recv_block), {});
      send_block = recv_block;
    }
    // Allgather: send at local base + 2t, recv at base + 2t + 1. It starts with block r + 1, which
    // the last reduce-scatter step completed.
    const std::uint32_t base = 2 * steps;
    send_block = next;
    for (std::uint32_t step = 0; step < steps; ++step) {
      const std::uint32_t recv_block = before(send_block);
      dep[0] = base + 2 * step - 1; // step 0: base - 1 is the last recv_reduce
      detail::add_op(s, OpKind::send, next, block(send_block), dep);
      dep[0] = 2 * step; // the reduce-scatter send of the block this receive overwrites
      detail::add_op(s, OpKind::recv, prev, block(recv_block), dep);
      send_block = recv_block;
    }
  }
  s.finish();
  return s;
}

Symmetry ring_symmetry(const Request& req) {
  const bool equal_blocks = req.ranks >= 2 && req.bytes.value % req.ranks == 0;
  return {equal_blocks && req.counts.empty() ? core::SymmetryKind::rotation
                                             : core::SymmetryKind::none};
}

std::optional<CostTerms> ring_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0) {
    return std::nullopt;
  }
  const std::uint64_t block = n / p;
  const auto moved = static_cast<double>((p - 1) * block); // (p-1)/p n, exactly
  return CostTerms{2.0 * static_cast<double>(p - 1), 2.0 * moved, moved};
}

} // namespace

AlgorithmInfo describe_ring() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "ring reduce-scatter then ring allgather over p blocks (bandwidth-optimal)";
  a.source = "Patarasuk & Yuan, JPDC 2009; Open MPI ompi_coll_base_allreduce_intra_ring; MPICH "
             "MPIR_Allreduce_intra_ring";
  // ucc:ring: UCC TL/UCP's ring allreduce, a ring reduce-scatter and allgather (formats.md f.1).
  a.aliases = {"ompi:4", "ompi:ring", "mpich:ring", "smpi:lr", "ucc:ring"};
  a.check = [](const Request& req) {
    return detail::size_limit_refusal(detail::collapsed_counts(ring_counts(req.ranks), req));
  };
  a.symmetry = ring_symmetry;
  a.generate = generate_ring;
  a.cost = ring_cost;
  a.cost_formula = "2(p-1)a + 2(p-1)/p n b + (p-1)/p n g (exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
