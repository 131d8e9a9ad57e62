// Ring allreduce over a permuted ring order (algorithms.md AR4 with the rank reordering of section
// 1.10 item 6): position i of the ring holds rank sigma(i) = (i * stride) mod p, so rank r sends to
// r + stride and receives from r - stride (mod p).
//
// Why: a ring's cost on a real topology depends on which ranks are neighbours, not on the
// algorithm. With ranks placed node-major (ppn consecutive ranks per node), stride 1 keeps p -
// p/ppn of the p ring links inside nodes and crosses each node boundary once; any stride in [ppn,
// p-ppn] coprime with p (ppn + 1, say, when it is) puts every link between nodes, so the same
// schedule runs at NIC speed instead of NVLink/shared-memory speed. On a round-robin placement
// (rank r on node r mod N) stride 1 is the worst case, every link crosses nodes, and the order that
// fixes it (0, N, 2N, ..., 1, N+1, ...) is not of the form i * stride: general permutations are the
// next step of item 6. Section 1.10 item 6 asks for this renaming as an input the simulator can
// search over; this algorithm is its simplest instance (an affine permutation, a ring of peers r +-
// stride) and needs no topology: the engine prices the links it crosses.
//
// Source: the ring of P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for
// clusters of workstations", J. Parallel Distrib. Comput. 69(2), 2009 (Open MPI
// ompi_coll_base_allreduce_intra_ring, MPICH MPIR_Allreduce_intra_ring); NCCL chooses its ring
// order by topology search (src/graph/search.cc, rings.cc), which a stride models crudely.
//
// Cost (n divisible by p): 2(p-1)a + 2(p-1)/p n b + (p-1)/p n g, the ring's, for any stride on a
// uniform topology; with uneven blocks every step is paced by the largest block and cost()
// declines.
//
// order=renamed replaces the stride with the placement's own order (generator_support.hpp,
// renamed_ring_order; Rico-Gallego and Diaz-Martin, "Improving the performance of MPI_Allreduce
// through rank renaming", NESUS 2014): the process-to-core mapping stays, the ranks are renamed so
// that ring neighbours share a node, and a round-robin placement crosses each node boundary once
// instead of on every link. Any permutation works in the schedule below; only the order changes.
//
// Refused when gcd(stride, p) != 1: then i * stride mod p repeats before it visits every rank and
// the permutation is not one (it splits into gcd(stride, p) separate rings).
//
// Schedule, position i = sigma^-1(r), blocks taken mod p (block b is block_range(n, p, b)):
//   reduce-scatter step s = 0..p-2: send block i-s to sigma(i+1); recv_reduce block i-s-1 from
//     sigma(i-1).
//   allgather step t = 0..p-2:      send block i+1-t to sigma(i+1); recv block i-t from sigma(i-1).
// Blocks are numbered by ring position, so after the reduce-scatter the rank at position i holds
// the reduced block i+1; any numbering is correct for an allreduce. Dependencies are the ring's: a
// send waits for the receive that produced its block; an allgather receive waits for the
// reduce-scatter send of the block it overwrites.

#include "allreduce/allreduce_algorithms.hpp"
#include "generator_support.hpp"

#include <array>
#include <fmt/format.h>
#include <numeric>
#include <vector>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "ring_reordered";
constexpr std::int64_t kDefaultStride = 1;

std::uint64_t stride_of(const Request& req) {
  const auto it = req.params.find("stride");
  return static_cast<std::uint64_t>(it == req.params.end() ? kDefaultStride : it->second);
}

/// `order`: 0 the stride's affine order, 1 the renamed order of the placement.
constexpr std::int64_t kOrderStride = 0;
constexpr std::int64_t kOrderRenamed = 1;
bool renamed(const Request& req) {
  const auto it = req.params.find("order");
  return it != req.params.end() && it->second == kOrderRenamed;
}

/// Position i of the ring holds rank sigma[i].
std::vector<core::Rank> ring_order(const Request& req) {
  const std::uint32_t p = req.ranks;
  if (renamed(req)) {
    return detail::renamed_ring_order(req);
  }
  const std::uint64_t stride = stride_of(req) % p;
  std::vector<core::Rank> sigma(p);
  for (std::uint32_t i = 0; i < p; ++i) {
    sigma[i] = static_cast<core::Rank>((std::uint64_t{i} * stride) % p);
  }
  return sigma;
}

OpCounts ring_reordered_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  return {4 * pp * (pp - 1), pp * (3 * pp - 4)};
}

std::string ring_reordered_refusal(const Request& req) {
  if (renamed(req)) {
    return detail::size_limit_refusal(ring_reordered_counts(req.ranks));
  }
  const std::uint64_t stride = stride_of(req);
  const std::uint64_t g = std::gcd(stride, std::uint64_t{req.ranks});
  if (g != 1) {
    return fmt::format("stride {} shares the factor {} with ranks {}: i * stride mod p would "
                       "visit only {} of the ranks (choose a stride coprime with the rank count)",
                       stride, g, req.ranks, req.ranks / g);
  }
  return detail::size_limit_refusal(ring_reordered_counts(req.ranks));
}

core::Schedule generate_ring_reordered(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  const OpCounts counts = ring_reordered_counts(p);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  // sigma (position -> rank) and its inverse.
  const std::vector<core::Rank> sigma = ring_order(req);
  std::vector<std::uint32_t> position(p);
  for (std::uint32_t i = 0; i < p; ++i) {
    position[sigma[i]] = i;
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
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    const std::uint32_t i = position[r];
    const core::Rank next = sigma[i + 1 == p ? 0 : i + 1];
    const core::Rank prev = sigma[before(i)];
    // Reduce-scatter: send at local 2s, recv_reduce at local 2s + 1.
    std::uint32_t send_block = i;
    for (std::uint32_t step = 0; step < steps; ++step) {
      const std::uint32_t recv_block = before(send_block);
      dep[0] = step == 0 ? 0 : 2 * step - 1; // the recv_reduce that produced this block
      detail::add_op(s, OpKind::send, next, block(send_block),
                     std::span(dep.data(), step == 0 ? 0 : 1));
      detail::add_op(s, OpKind::recv_reduce, prev, block(recv_block), {});
      send_block = recv_block;
    }
    // Allgather: send at local base + 2t, recv at base + 2t + 1, starting with block i + 1.
    const std::uint32_t base = 2 * steps;
    send_block = i + 1 == p ? 0 : i + 1;
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

std::optional<CostTerms> ring_reordered_cost(const Request& req) {
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0) {
    return std::nullopt;
  }
  const auto moved = static_cast<double>((p - 1) * (n / p)); // (p-1)/p n, exactly
  return CostTerms{2.0 * static_cast<double>(p - 1), 2.0 * moved, moved};
}

} // namespace

AlgorithmInfo describe_allreduce_ring_reordered() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allreduce;
  a.summary = "ring allreduce over a permuted ring order: sigma(i) = i * stride mod p "
              "(neighbours r +- stride), or the placement's ranks renamed node by node "
              "(order=renamed)";
  a.source = "Patarasuk & Yuan, JPDC 2009 (ring), with the rank reordering of algorithms.md 1.10 "
             "item 6 and the rank renaming of Rico-Gallego & Diaz-Martin, NESUS 2014";
  a.params = {{"stride", kDefaultStride, 1, 1 << 30,
               "ring step: rank r sends to r + stride mod p (must be coprime with p)"},
              {"order",
               kOrderStride,
               kOrderStride,
               kOrderRenamed,
               "stride: the ring of r +- stride; renamed: the placement's ranks node by node, in "
               "slot order within a node (each node boundary crossed once; stride is ignored)",
               {"stride", "renamed"}}};
  a.constraints = {"stride must be coprime with the rank count (order=stride)"};
  a.check = ring_reordered_refusal;
  a.generate = generate_ring_reordered;
  a.cost = ring_reordered_cost;
  a.cost_formula = "2(p-1)a + 2(p-1)/p n b + (p-1)/p n g for any stride on a uniform topology "
                   "(exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
