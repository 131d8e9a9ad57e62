// Recursive-doubling allgather (algorithms.md AG3): in step k rank r swaps everything it holds
// (the 2^k blocks of its aligned group) with rank r XOR 2^k, so the holdings double each step.
//
// Source: R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of collective communication
// operations in MPICH", IJHPCA 19(1), 2005; MPICH MPIR_Allgather_intra_recursive_doubling; Open MPI
// ompi_coll_base_allgather_intra_recursivedoubling (coll/tuned allgather algorithm 3); SMPI "rdb".
//
// Cost (p = 2^k and p divides n): lg p a + (p-1)/p n b. With uneven blocks the groups differ in
// size and a step is paced by the larger one, so cost() declines.
//
// Power of two only. Open MPI's implementation hands a non-power-of-two communicator to Bruck
// ("bruck" here) and MPICH's default selection only picks recursive doubling for powers of two;
// the request is refused with that advice rather than silently running another algorithm.
//
// Schedule, rank r, step k = 0..lg p - 1: send data[group(r, k)] to r XOR 2^k, recv
// data[group(r XOR 2^k, k)] from it, where group(q, k) is the blocks of q's aligned group of 2^k
// ranks: contiguous in `data`, so one message each way and no scratch buffer. Zero-length messages
// (n < p) are kept.
//
// Dependencies (2 lg p operations, 2 lg p - 3 dependencies per rank for p >= 4): the send of step
// k reads every block received so far, so it waits for the receive of step k-1 and, to order it
// after the earlier receives too, for the send of step k-1 (which waited for those). Receives write
// blocks never touched before and wait for nothing.

#include "allgather/allgather_algorithms.hpp"
#include "collsim/core/layout.hpp"
#include "generator_support.hpp"

#include <array>
#include <bit>
#include <fmt/format.h>

namespace collsim::algorithms {
namespace {

using core::OpKind;
using detail::OpCounts;

constexpr const char* kName = "recursive_doubling";

OpCounts recursive_doubling_counts(std::uint32_t p) {
  if (p < 2) {
    return {};
  }
  const std::uint64_t pp = p;
  const std::uint64_t k = detail::floor_log2(p);
  // Step 1 has one dependency, later steps two.
  return {pp * 2 * k, pp * (k >= 2 ? 2 * k - 3 : k - 1)};
}

std::string recursive_doubling_refusal(const Request& req) {
  if (!std::has_single_bit(req.ranks)) {
    return fmt::format("ranks must be a power of two (got {}); Open MPI runs bruck instead for "
                       "other rank counts: use 'bruck'",
                       req.ranks);
  }
  return detail::size_limit_refusal(recursive_doubling_counts(req.ranks));
}

core::Schedule generate_recursive_doubling(const Request& req) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  core::Schedule s(make_header(req, 0, kName));
  const core::BlockLayout lay(s.header());
  const OpCounts counts = recursive_doubling_counts(p);
  s.reserve(counts.ops, counts.deps);
  // The blocks of the aligned group of `size` ranks containing rank q.
  const auto group = [&](std::uint32_t q, std::uint32_t size) {
    const std::uint32_t first = q & ~(size - 1);
    const std::uint64_t begin = lay.block(first).first;
    const std::uint64_t end = first + size == p ? n : lay.block(first + size).first;
    return detail::data_range(begin, end - begin);
  };

  std::array<std::uint32_t, 2> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    std::uint32_t last_send = 0;
    std::uint32_t last_recv = 0;
    std::size_t ndeps = 0;
    for (std::uint32_t mask = 1; mask < p; mask <<= 1) {
      const core::Rank peer = r ^ mask;
      last_send =
          detail::add_op(s, OpKind::send, peer, group(r, mask), std::span(dep.data(), ndeps));
      last_recv = detail::add_op(s, OpKind::recv, peer, group(peer, mask), {});
      dep = {last_recv, last_send};
      ndeps = mask == 1 ? 1 : 2; // after step 0 the send of step 0 read only the rank's own block
    }
  }
  s.finish();
  return s;
}

std::optional<CostTerms> recursive_doubling_cost(const Request& req) {
  if (!req.counts.empty()) {
    return std::nullopt;
  }
  const std::uint64_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  if (p == 0 || n % p != 0 || !std::has_single_bit(p)) {
    return std::nullopt;
  }
  const std::uint64_t block = n / p; // exact: p divides n
  return CostTerms{static_cast<double>(detail::floor_log2(req.ranks)),
                   static_cast<double>((p - 1) * block), 0.0};
}

} // namespace

AlgorithmInfo describe_allgather_recursive_doubling() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::allgather;
  a.summary = "lg p exchanges with rank XOR 2^k, doubling the blocks held each step";
  a.source = "Thakur, Rabenseifner & Gropp, IJHPCA 2005; MPICH "
             "MPIR_Allgather_intra_recursive_doubling; Open MPI "
             "ompi_coll_base_allgather_intra_recursivedoubling";
  a.aliases = {"ompi:3", "ompi:recursive_doubling", "mpich:recursive_doubling", "smpi:rdb"};
  a.constraints = {"ranks must be a power of two"};
  a.check = recursive_doubling_refusal;
  a.counts =
      true; // allgatherv: MPICH MPIR_Allgatherv_intra_recursive_doubling (blocks at their counts)
  a.generate = generate_recursive_doubling;
  a.cost = recursive_doubling_cost;
  a.cost_formula = "lg p a + (p-1)/p n b (p a power of two; exact when p divides n)";
  return a;
}

} // namespace collsim::algorithms
